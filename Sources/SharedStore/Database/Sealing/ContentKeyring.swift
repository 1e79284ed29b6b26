import SottoCrypto
import Synchronization

/// The conversation content keys a process holds (docs/adr/0052): the `databaseKey` of each
/// identity it opened, and the `ConversationContentKey` derived from it per conversation. A
/// connection carries one (`SQLiteConnection.contentKeys`), and every writer and repository
/// that touches a content column seals or opens through it. The worker remembers the one
/// identity a push opened; the daemon also looks an identity up in its keystore (`lookup`).
///
/// A `Mutex`, not an actor: the keys are needed synchronously inside a SQL transaction, and
/// the critical sections are dictionary reads and writes.
///
/// ```swift
/// let keys = ContentKeyring()
/// keys.remember(identity)
/// conn.contentKeys = keys
/// try IncomingMessageWriter.write(message, …, on: conn)          // content sealed
/// keys.forget(inboxId: identity.inboxId)   // explode: nothing left to open with
/// ```
public final class ContentKeyring: Sendable {
    private struct State {
        var databaseKeys: [String: SecretBytes] = [:]      // inboxId → databaseKey
        var keys: [String: (inboxId: String, key: ConversationContentKey)] = [:]   // by conversationId
    }

    private let state = Mutex(State())
    private let lookup: @Sendable (String) -> SecretBytes?

    /// `lookup` gives the `databaseKey` of an inbox not remembered (the daemon reads its keystore).
    public init(lookup: @escaping @Sendable (String) -> SecretBytes? = { _ in nil }) {
        self.lookup = lookup
    }

    public func remember(_ identity: Identity) {
        state.withLock { $0.databaseKeys[identity.inboxId] = identity.databaseKey }
    }

    /// Drops an inbox's database key and its conversations' derived keys (their buffers are
    /// zeroed when the last reference goes). After an explode, a leave or an inbox deletion.
    public func forget(inboxId: String) {
        state.withLock { state in
            state.databaseKeys[inboxId] = nil
            state.keys = state.keys.filter { $0.value.inboxId != inboxId }
        }
    }

    /// How many derived keys are held (tests: nothing left after an explode).
    public var heldKeyCount: Int { state.withLock { $0.keys.count + $0.databaseKeys.count } }

    /// The key of `conversationId`, derived from its inbox's identity; nil when the
    /// conversation has no row or its identity is not available.
    public func key(conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> ConversationContentKey? {
        if let key = state.withLock({ $0.keys[conversationId]?.key }) { return key }
        guard let inboxId = try conn.queryOne("SELECT inboxId FROM conversation WHERE id = ?",
                                              [.text(conversationId)])?.string(0) else { return nil }
        return key(conversationId: conversationId, inboxId: inboxId)
    }

    /// The key of a conversation whose inbox the caller already knows (a conversation being created).
    public func key(conversationId: String, inboxId: String) -> ConversationContentKey? {
        if let held = state.withLock({ $0.keys[conversationId] }), held.inboxId == inboxId { return held.key }
        guard let databaseKey = state.withLock({ $0.databaseKeys[inboxId] }) ?? lookup(inboxId) else { return nil }
        let key = ConversationContentKey(databaseKey: databaseKey, conversationId: conversationId)
        state.withLock { $0.keys[conversationId] = (inboxId, key) }
        return key
    }
}
