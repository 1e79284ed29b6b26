import SharedStore

/// The joins the creator refused (`join_refusal`, written by the worker with the refusal,
/// docs/protocol/join-refusal.md): which pending joins the daemon deletes now, what `sotto ls`
/// shows until the user dismisses it (the dismissal is ``JoinRefusalDismissal``'s write).
///
/// ```swift
/// let doomed = try JoinRefusalRepository.refusedPendingInboxes(on: conn)   // delete as an abandoned join
/// let shown = try JoinRefusalRepository.all(on: conn)                       // sotto ls
/// ```
public enum JoinRefusalRepository {
    /// One refused join as stored. `reason` is a raw value of `JoinRefusal.Reason`.
    public struct Entry: Sendable, Equatable {
        public let conversationId: String
        public let joinRequestId: String
        public let reason: String
        public let askedAt: Int64
        public let refusedAt: Int64
    }

    /// Newest first; one entry per conversation (a later try replaces an earlier one's row).
    public static func all(on conn: SQLiteConnection) throws(StoreError) -> [Entry] {
        var out: [Entry] = []
        for row in try conn.query("""
            SELECT conversationId, joinRequestId, reason, askedAt, refusedAt FROM join_refusal
            ORDER BY refusedAt DESC, conversationId
            """) {
            out.append(Entry(conversationId: try row.string(0), joinRequestId: try row.string(1), reason: try row.string(2),
                             askedAt: try row.int64(3), refusedAt: try row.int64(4)))
        }
        return out
    }

    /// Inboxes whose conversations are all still `pendingJoin` and whose join the creator
    /// refused: deleted with their identity as an abandoned join is (docs/adr/0033).
    public static func refusedPendingInboxes(on conn: SQLiteConnection) throws(StoreError) -> [String] {
        var out: [String] = []
        for row in try conn.query("""
            SELECT DISTINCT c.inboxId FROM conversation c
            JOIN join_refusal r ON r.conversationId = c.id
            JOIN message m ON m.id = r.joinRequestId AND m.conversationId = c.id AND m.isOutgoing = 1
            WHERE c.state = 'pendingJoin'
              AND NOT EXISTS (SELECT 1 FROM conversation o WHERE o.inboxId = c.inboxId AND o.state <> 'pendingJoin')
            ORDER BY c.inboxId
            """) {
            out.append(try row.string(0))
        }
        return out
    }
}
