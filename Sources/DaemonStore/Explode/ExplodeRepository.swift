import SharedStore
import SottoCrypto
import SottoWire

/// Read-only queries behind exploding conversations (the source app's decision record
/// "Conversation Explode Feature", ADR 0016): which are due, when the next one is, whether the
/// creator's explode message still has pushes on their way, and when the creator set it.
///
/// ```swift
/// for due in try ExplodeRepository.due(now: now, on: conn) {
///     let backed = try ExplodeRepository.creatorExpiry(conversationId: due.id, creatorInboxId: due.creatorInboxId, on: conn)
/// }
/// let next = try ExplodeRepository.nextExpiry(after: now, on: conn)
/// ```
public enum ExplodeRepository {
    /// A conversation whose `expiresAt` has come.
    public struct Due: Sendable, Equatable {
        public let id: String
        public let inboxId: String
        public let creatorInboxId: String
        public let expiresAt: Int64
    }

    /// Conversations with an `expiresAt` at or before `now`.
    public static func due(now: Int64, on conn: SQLiteConnection) throws(StoreError) -> [Due] {
        var out: [Due] = []
        for row in try conn.query("""
            SELECT id, inboxId, creatorInboxId, expiresAt FROM conversation
            WHERE expiresAt IS NOT NULL AND expiresAt <= ?
            """, [.integer(now)]) {
            out.append(Due(id: try row.string(0), inboxId: try row.string(1),
                           creatorInboxId: try row.string(2), expiresAt: try row.int64(3)))
        }
        return out
    }

    /// The earliest `expiresAt` after `now`, if any conversation has one.
    public static func nextExpiry(after now: Int64, on conn: SQLiteConnection) throws(StoreError) -> Int64? {
        try conn.queryOne("SELECT min(expiresAt) FROM conversation WHERE expiresAt > ?", [.integer(now)])?.optionalInt64(0)
    }

    /// True while this device's own explode message in the conversation still has a pending
    /// push and was stored after `storedAfter` (now minus the delivery budget).
    public static func ownExplodePushesPending(conversationId: String, storedAfter: Int64,
                                               on conn: SQLiteConnection) throws(StoreError) -> Bool {
        try conn.queryOne("""
            SELECT 1 FROM message m JOIN outbox o ON o.messageId = m.id
            WHERE m.conversationId = ? AND m.isOutgoing = 1 AND m.contentType = ?
              AND m.receivedAt > ? AND o.state = 'pending'
            LIMIT 1
            """, [.text(conversationId), .text(ContentType.explodeSettings), .integer(storedAfter)]) != nil
    }

    /// The time of the creator's explode decision in force (docs/protocol/explode-schedule.md
    /// §3: the highest sequence, then the earliest time), or nil when the creator sent none
    /// or cancelled it.
    public static func creatorExpiry(conversationId: String, creatorInboxId: String,
                                     on conn: SQLiteConnection) throws(StoreError) -> Int64? {
        try ExplodeScheduleRepository.inForce(conversationId: conversationId, creatorInboxId: creatorInboxId,
                                              on: conn)?.expiresAtMs
    }

    /// When this device left the conversation (its own `sotto/leave:1.0`, docs/protocol/leave-remove.md),
    /// or nil: a leave deletes the conversation here as an explode does, and backs its `expiresAt`.
    public static func ownLeaveTime(conversationId: String, ownInboxId: String,
                                    on conn: SQLiteConnection) throws(StoreError) -> Int64? {
        try conn.queryOne("""
            SELECT min(sentAt) FROM message WHERE conversationId = ? AND senderInboxId = ? AND isOutgoing = 1 AND contentType = ?
            """, [.text(conversationId), .text(ownInboxId), .text(ContentType.leave)])?.optionalInt64(0)
    }

    /// When the creator removed this device's inbox from the conversation (a `sotto/remove:1.0`
    /// from the creator naming it, docs/protocol/leave-remove.md §6), or nil: like an explode,
    /// it backs the conversation's deletion here.
    public static func removedTime(conversationId: String, ownInboxId: String, creatorInboxId: String,
                                   on conn: SQLiteConnection) throws(StoreError) -> Int64? {
        // The content is sealed (docs/adr/0052), so it is opened and decoded here, not in SQL.
        var earliest: Int64?
        for row in try conn.query("""
            SELECT id, sentAt, content FROM message WHERE conversationId = ? AND senderInboxId = ? AND contentType = ?
            """, [.text(conversationId), .text(creatorInboxId), .text(ContentType.remove)]) {
            guard let content = try conn.openedCell(row.values[2], .messageContent, conversationId: conversationId,
                                                    rowId: try row.string(0)).bytes,
                  case .remove(inboxId: let removed)? = try? MessageContent.decode(contentType: ContentType.remove,
                                                                          content: content, fallback: nil),
                  removed == ownInboxId else { continue }
            let sentAt = try row.int64(1)
            earliest = min(earliest ?? sentAt, sentAt)
        }
        return earliest
    }

    /// The sequence the creator's next explode decision carries: one more than any it made
    /// (docs/protocol/explode-schedule.md §3), on the decisions SharedStore reads.
    public static func nextScheduleSequence(conversationId: String, creatorInboxId: String,
                                            on conn: SQLiteConnection) throws(StoreError) -> Int64 {
        let highest = try ExplodeScheduleRepository.decisions(conversationId: conversationId, creatorInboxId: creatorInboxId, on: conn)
            .map(\.sequence).max() ?? 0
        return min(highest, ExplodeSchedule.maxSequence - 1) + 1
    }
}
