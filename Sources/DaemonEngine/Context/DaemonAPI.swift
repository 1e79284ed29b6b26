import SottoCrypto
import SottoWire

/// What a control request may reach of a running daemon, and nothing more: the services a
/// method calls, the change feed a subscription follows, the conversations open in a client,
/// `sotto status`, and what an error message names (the group directory, the keystore, the
/// identities that did not open). As signal-cli's `Manager` is to its JSON-RPC layer: the
/// app's `RPCDispatcher` holds this, not ``DaemonContext`` with every part (the outbox, the
/// WAL keeper, the inbox LRU, the database handle) a request has no business touching.
///
/// ```swift
/// let api = context.api
/// await api.feed.catchUp()
/// let sent = try await api.service.send(to: "c1", text: "hi", replyTo: nil)
/// ```
public struct DaemonAPI: Sendable {
    private let context: DaemonContext

    init(_ context: DaemonContext) {
        self.context = context
    }

    public var service: ConversationService { context.service }
    public var invites: InviteService { context.invites }
    public var explode: ExplodeService { context.explode }
    public var leave: LeaveService { context.leave }
    public var removals: RemoveService { context.removals }
    public var rosterRequests: RosterRequests { context.rosterRequests }
    public var feed: ChangeFeed { context.feed }
    public var openConversations: OpenConversations { context.openConversations }
    public var attachmentFetcher: AttachmentFetcher { context.attachmentFetcher }

    /// The group directory: where to free space, what to restore from a backup.
    public var group: GroupDirectory { context.group }
    /// The keystore's directory: where a damaged identity's file is.
    public var keystoreDirectory: String { context.keystore.directory }
    /// Where the master key lives, for `sotto status`.
    public var masterKeySource: MasterKeySource { context.keystore.masterKeySource }
    /// Identities that did not open at start-up (their conversations are not served).
    public var damagedIdentities: [KeystoreAudit.Damaged] { context.damagedIdentities }

    /// `sotto status`, as the engine knows it; the daemon app adds its version and the master key's place.
    public func status() async -> DaemonStatus {
        await context.status()
    }
}

extension DaemonContext {
    /// What control requests may reach of this daemon (``DaemonAPI``).
    public var api: DaemonAPI { DaemonAPI(self) }
}
