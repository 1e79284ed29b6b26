import ControlProtocol
import Foundation
import SharedStore

extension ChangeNotification {
    /// The `change` notification a subscriber receives for one applied change: built here and
    /// nowhere else. A new message also carries what `sotto watch` prints for it: its text and
    /// its sender's profile name (when it has one).
    ///
    /// ```swift
    /// connection.send(ChangeNotification.line(change, database: db))
    /// // {"jsonrpc":"2.0","method":"change","params":{"seq":42,"kind":"messageInserted",…}}
    /// ```
    static func applied(_ change: DBChange, database: DaemonDatabase) -> ChangeNotification {
        var notification = ChangeNotification(change)
        guard change.knownKind == .messageInserted, let id = change.entityId,
              let row = try? database.read({ conn in try MessageRepository.find(id: id, on: conn) }) else { return notification }
        let message = TimelineMessage(row)
        notification.text = message.text
        notification.outgoing = message.isOutgoing
        notification.senderInboxId = message.senderInboxId
        if !message.isOutgoing, let name = try? database.read({ conn in
            try MemberRepository.profileName(conversationId: row.conversationId, inboxId: row.senderInboxId, on: conn)
        }), !name.isEmpty {
            notification.senderName = name
        }
        return notification
    }

    /// The whole line, newline included.
    static func line(_ change: DBChange, database: DaemonDatabase) -> String {
        JSONRPC.notificationLine(applied(change, database: database))
    }
}

/// Changes a `since` replay could not read (a damaged page of change_log): reported to the
/// subscriber (as a ``FeedGap``) instead of skipped in silence.
///
/// ```swift
/// let (id, stream, gap) = await feed.subscribe(since: 40)   // gap?.afterSeq == 40, gap?.resumedAtSeq == 61
/// ```
struct ChangeGap: Sendable, Equatable {
    /// The last change delivered before the gap, and the first delivered after it (nil
    /// when nothing after it could be read).
    let afterSeq: Int64
    let resumedAtSeq: Int64?
    let reason: String
}
