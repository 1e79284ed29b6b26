import SharedStore

/// Read-only queries behind giving up on a join that was never accepted (docs/adr/0033): a
/// conversation stays `pendingJoin` from `sotto join` until the creator's membership message
/// arrives; one whose creator refused, let the invite expire or is gone never leaves it.
/// `createdAt` of a `pendingJoin` conversation is when this device asked to join.
///
/// ```swift
/// let stale = try PendingJoinRepository.inboxes(askedBefore: now - limitMs, on: conn)
/// let next = try PendingJoinRepository.oldestRequest(on: conn).map { $0 + limitMs }
/// ```
public enum PendingJoinRepository {
    /// Inboxes whose conversations are all still `pendingJoin`, asked at or before `cutoff`
    /// (an inbox that also holds an accepted conversation is never returned).
    public static func inboxes(askedBefore cutoff: Int64, on conn: SQLiteConnection) throws(StoreError) -> [String] {
        var out: [String] = []
        for row in try conn.query("""
            SELECT DISTINCT c.inboxId FROM conversation c
            WHERE c.state = 'pendingJoin' AND c.createdAt <= ?
              AND NOT EXISTS (SELECT 1 FROM conversation o WHERE o.inboxId = c.inboxId AND o.state <> 'pendingJoin')
            ORDER BY c.inboxId
            """, [.integer(cutoff)]) {
            out.append(try row.string(0))
        }
        return out
    }

    /// When the oldest join still pending was asked, if any is.
    public static func oldestRequest(on conn: SQLiteConnection) throws(StoreError) -> Int64? {
        try conn.queryOne("SELECT min(createdAt) FROM conversation WHERE state = 'pendingJoin'")?.optionalInt64(0)
    }
}
