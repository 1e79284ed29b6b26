import ControlProtocol
import DaemonCore
import DaemonStore
import SharedStore

/// One committed change as the change feed hands it on: the `change_log` row and what it is
/// about, read once, in the feed's pass, in one read transaction per batch. The consumer
/// applies it (the timeline message, the inbox to wake), then every subscriber gets
/// `notification`, built from the same reads and sent as is: nothing reads the change back.
///
/// ```swift
/// let batch = FeedChange.read(changes, on: conn)
/// await service.apply(batch)                        // uses batch[i].message, batch[i].inboxId
/// subscribers.deliver(batch[i].notification)        // the same value to every subscriber
/// ```
struct FeedChange: Sendable {
    let change: DBChange
    /// The message the change is about (a new or changed message, or the membership or
    /// explode-settings message behind a roster or schedule change), as the timeline shows it.
    let message: TimelineMessage?
    /// The inbox of the change's conversation, for a message change (the one to wake).
    let inboxId: String?
    /// The `change` notification every subscriber receives: a new message also carries what
    /// `sotto watch` prints for it, its text and its sender's profile name (when it has one);
    /// a new or changed message carries the message as `readMessages` returns it, so that a
    /// client's timeline shows it without reading it back (docs/adr/0070).
    let notification: ChangeNotification

    var seq: Int64 { change.seq }
    var conversationId: String? { change.conversationId }
    var knownKind: ChangeKind? { change.knownKind }

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
                  let row = try? MessageRepository.find(id: id, on: conn) else {
                return FeedChange(change: change, message: nil, inboxId: nil, notification: ChangeNotification(change))
            }
            let message = TimelineMessage(row)
            var inboxId: String?
            if kind == .messageInserted || kind == .messageStatusChanged {
                inboxId = inboxes[row.conversationId]
                    ?? (try? ConversationRepository.find(id: row.conversationId, on: conn))?.inboxId
                inboxes[row.conversationId] = inboxId
            }
            var notification = ChangeNotification(change)
            if kind == .messageInserted || kind == .messageStatusChanged {
                var senderName: String?
                if !message.isOutgoing, let name = try? MemberRepository.profileName(
                    conversationId: row.conversationId, inboxId: row.senderInboxId, on: conn), !name.isEmpty {
                    senderName = name
                }
                // An outgoing message's status is its members' pushes', as `readMessages` says it.
                let deliveries = message.isOutgoing ? (try? OutboxRepository.deliveries(messageIds: [id], on: conn))?[id] : nil
                let info = MessageInfo(message, senderName: senderName, deliveries: deliveries)
                notification.message = info
                if kind == .messageInserted {
                    notification.text = info.text
                    notification.outgoing = info.outgoing
                    notification.senderInboxId = info.senderInboxId
                    notification.senderName = info.senderName
                }
            }
            return FeedChange(change: change, message: message, inboxId: inboxId, notification: notification)
        }
    }
}

extension ChangeNotification {
    /// A change_log row; the message members are filled in by `FeedChange.read` above.
    init(_ change: DBChange) {
        self.init(seq: change.seq, kind: change.kind, writerPid: change.writerPid, createdAtMs: change.createdAt,
                  conversationId: change.conversationId, entityId: change.entityId)
    }
}
