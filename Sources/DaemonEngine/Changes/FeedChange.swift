import DaemonCore
import DaemonStore
import SharedStore

/// One committed change as the change feed hands it on: the `change_log` row and what it is
/// about, read once, in the feed's pass, in one read transaction per batch. The consumer
/// applies it (the timeline message, the inbox to wake), then every subscriber gets the same
/// value: nothing reads the change back. It is the engine's own value; the control server's
/// app turns it into the wire's `change` notification (`SottoDaemon/Control`).
///
/// ```swift
/// let batch = FeedChange.read(changes, on: conn)
/// await router.route(batch)                         // uses batch[i].message, batch[i].inboxId
/// subscribers.deliver(batch[i])                     // the same value to every subscriber
/// ```
public struct FeedChange: Sendable {
    public let change: DBChange
    /// The message the change is about (a new or changed message, or the membership or
    /// explode-settings message behind a roster or schedule change), as the timeline shows it.
    public let message: TimelineMessage?
    /// The inbox of the change's conversation, for a message change (the one to wake).
    let inboxId: String?
    /// A new or changed incoming message's sender's profile name, when it has one.
    public let senderName: String?
    /// A new or changed outgoing message's pushes, one per member: its status is theirs.
    public let deliveries: [OutboxRepository.MemberDelivery]?

    init(change: DBChange, message: TimelineMessage? = nil, inboxId: String? = nil, senderName: String? = nil,
         deliveries: [OutboxRepository.MemberDelivery]? = nil) {
        self.change = change
        self.message = message
        self.inboxId = inboxId
        self.senderName = senderName
        self.deliveries = deliveries
    }

    public var seq: Int64 { change.seq }
    public var conversationId: String? { change.conversationId }
    public var knownKind: ChangeKind? { change.knownKind }

    // MARK: Reading a batch

    /// The kinds whose `entityId` names a message row.
    private static let aboutAMessage: Set<ChangeKind> = [.messageInserted, .messageStatusChanged,
                                                         .membersChanged, .conversationExpiresChanged]

    /// Reads what each change is about on `conn`, once. A row that cannot be read (gone since,
    /// or on a damaged page) leaves the change bare: it is still applied and told.
    static func read(_ changes: [DBChange], on conn: SQLiteConnection) -> [FeedChange] {
        var inboxes: [String: String] = [:]
        return changes.map { change in
            guard let kind = change.knownKind, aboutAMessage.contains(kind), let id = change.entityId,
                  let row = try? MessageRowRepository.find(id: id, on: conn) else {
                return FeedChange(change: change)
            }
            let message = TimelineMessage(row)
            guard kind == .messageInserted || kind == .messageStatusChanged else {
                return FeedChange(change: change, message: message)
            }
            let inboxId = inboxes[row.conversationId]
                ?? (try? ConversationRepository.find(id: row.conversationId, on: conn))?.inboxId
            inboxes[row.conversationId] = inboxId
            var senderName: String?
            if !message.isOutgoing, let name = try? MemberNamesRepository.profileName(
                conversationId: row.conversationId, inboxId: row.senderInboxId, on: conn), !name.isEmpty {
                senderName = name
            }
            // An outgoing message's status is its members' pushes', as `readMessages` says it.
            let deliveries = message.isOutgoing ? (try? OutboxRepository.deliveries(messageIds: [id], on: conn))?[id] : nil
            return FeedChange(change: change, message: message, inboxId: inboxId, senderName: senderName,
                              deliveries: deliveries)
        }
    }
}
