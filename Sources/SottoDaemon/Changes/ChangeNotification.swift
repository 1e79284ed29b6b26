import ControlProtocol
import Foundation
import SharedStore

/// The `change` notification a subscriber receives for one applied change: built here and
/// nowhere else. A new message also carries what `sotto watch` prints for it: its text and
/// its sender's profile name (when it has one).
///
/// ```swift
/// connection.send(ChangeNotification.line(change, database: db))
/// // {"jsonrpc":"2.0","method":"change","params":{"seq":42,"kind":"messageInserted",…}}
/// ```
enum ChangeNotification {
    static let method = "change"

    /// The notification's params.
    static func params(_ change: DBChange, database: DaemonDatabase) -> [String: Any] {
        var object = change.rpcObject
        guard change.knownKind == .messageInserted, let id = change.entityId,
              let row = try? database.read({ conn in try MessageRepository.find(id: id, on: conn) }) else { return object }
        let message = TimelineMessage(row)
        object["text"] = message.text
        object["outgoing"] = message.isOutgoing
        object["senderInboxId"] = message.senderInboxId
        if !message.isOutgoing, let name = try? database.read({ conn in
            try MemberRepository.profileName(conversationId: row.conversationId, inboxId: row.senderInboxId, on: conn)
        }), !name.isEmpty {
            object["senderName"] = name
        }
        return object
    }

    /// The whole line, newline included.
    static func line(_ change: DBChange, database: DaemonDatabase) -> String {
        JSONRPC.notificationLine(method: method, params: params(change, database: database))
    }
}

/// Changes a `since` replay could not read (a damaged page of change_log): reported to the
/// subscriber instead of skipped in silence.
///
/// ```swift
/// if let gap { result["gap"] = gap.rpcObject }   // {"afterSeq": 40, "resumedAtSeq": 61, "reason": …}
/// ```
struct ChangeGap: Sendable, Equatable {
    /// The last change delivered before the gap, and the first delivered after it (nil
    /// when nothing after it could be read).
    let afterSeq: Int64
    let resumedAtSeq: Int64?
    let reason: String

    var rpcObject: [String: Any] {
        var object: [String: Any] = ["afterSeq": afterSeq, "reason": reason]
        if let resumedAtSeq { object["resumedAtSeq"] = resumedAtSeq }
        return object
    }
}

extension DBChange {
    /// The fields every `change` notification has.
    var rpcObject: [String: Any] {
        var object: [String: Any] = ["seq": seq, "kind": kind, "writerPid": writerPid, "createdAtMs": createdAt]
        if let conversationId { object["conversationId"] = conversationId }
        if let entityId { object["entityId"] = entityId }
        return object
    }
}
