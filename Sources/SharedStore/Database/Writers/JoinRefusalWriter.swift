import SottoCrypto
import SottoWire

/// Records the creator's `sotto/join_refused:1.0` on the joiner's device
/// (docs/protocol/join-refusal.md §5), in the worker's transaction, after `SenderRules`
/// checked that the conversation's creator signed it with the key the invite named. It must
/// answer exactly this device's join: the conversation is still `pendingJoin` here and
/// `joinRequestId` is the `sotto/join_request:1.0` this inbox sent in it; anything else is
/// `unknown_message` and nothing is written. The row outlives the conversation (no foreign
/// key): the daemon deletes the pending join with its identity, as an abandoned join
/// (docs/adr/0033), and `sotto ls` keeps showing `refused: <reason>` until the user dismisses it.
///
/// ```swift
/// switch try JoinRefusalWriter.record(conversation: c, recipientInboxId: me, joinRequestId: id,
///                                     reason: "revoked", now: now, on: conn) {
/// case .duplicate: ack(duplicate: true)
/// case .recorded(let seq): signalDaemon(seq)
/// }
/// ```
public enum JoinRefusalWriter {
    public enum Outcome: Sendable, Equatable {
        /// A refusal of this join is already recorded: nothing written.
        case duplicate
        /// Recorded; the change_log seq that wakes the daemon.
        case recorded(seq: Int64)
    }

    public static func record(conversation: DBConversation, recipientInboxId: String, joinRequestId: String,
                              reason: String, now: Int64,
                              on conn: SQLiteConnection) throws(IncomingWriteError) -> Outcome {
        guard conversation.state == .pendingJoin else {
            throw .unknownMessage("a join refusal for a conversation this device is not waiting to join")
        }
        let sent = try store { () throws(StoreError) in
            try conn.queryOne("""
                SELECT 1 FROM message
                WHERE id = ? AND conversationId = ? AND senderInboxId = ? AND isOutgoing = 1 AND contentType = ?
                """, [.text(joinRequestId), .text(conversation.id), .text(recipientInboxId), .text(ContentType.joinRequest)])
        }
        guard sent != nil else {
            throw .unknownMessage("a join refusal naming no join request this device sent in the conversation")
        }
        return try store { () throws(StoreError) -> Outcome in
            let known = try conn.queryOne("SELECT 1 FROM join_refusal WHERE joinRequestId = ?", [.text(joinRequestId)])
            if known != nil { return .duplicate }
            try conn.run("""
                INSERT INTO join_refusal(joinRequestId, conversationId, reason, askedAt, refusedAt)
                VALUES (?, ?, ?, ?, ?)
                """, [.text(joinRequestId), .text(conversation.id), .text(reason), .integer(conversation.createdAt),
                      .integer(now)])
            return .recorded(seq: try ChangeLog.append(conn, kind: .joinRefused, conversationId: conversation.id,
                                                       entityId: joinRequestId, now: now))
        }
    }

    private static func store<T>(_ body: () throws(StoreError) -> T) throws(IncomingWriteError) -> T {
        do { return try body() } catch { throw .store(error) }
    }
}
