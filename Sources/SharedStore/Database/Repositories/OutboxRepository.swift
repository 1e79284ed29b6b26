/// Read-only queries over `outbox`.
///
/// ```swift
/// let due = try OutboxRepository.due(now: WallClock.nowMs(), limit: 20, on: conn)
/// ```
public enum OutboxRepository {
    /// Pending pushes whose next attempt time has come, earliest first.
    public static func due(now: Int64, limit: Int, on conn: SQLiteConnection) throws(StoreError) -> [DBOutboxItem] {
        var out: [DBOutboxItem] = []
        for row in try conn.query("""
            SELECT \(DBOutboxItem.columns) FROM outbox
            WHERE state = 'pending' AND nextAttemptAt <= ? ORDER BY nextAttemptAt LIMIT ?
            """, [.integer(now), .integer(Int64(max(0, limit)))]) {
            out.append(try DBOutboxItem(row: row))
        }
        return out
    }

    public static func items(messageId: String, on conn: SQLiteConnection) throws(StoreError) -> [DBOutboxItem] {
        var out: [DBOutboxItem] = []
        for row in try conn.query("""
            SELECT \(DBOutboxItem.columns) FROM outbox WHERE messageId = ? ORDER BY memberInboxId
            """, [.text(messageId)]) {
            out.append(try DBOutboxItem(row: row))
        }
        return out
    }

    /// When the earliest pending push is due, if any push is pending.
    public static func nextPendingAttempt(on conn: SQLiteConnection) throws(StoreError) -> Int64? {
        try conn.queryOne("SELECT min(nextAttemptAt) FROM outbox WHERE state = 'pending'")?.optionalInt64(0)
    }

    /// How one message's pushes stand: acked, still pending, given up.
    public struct DeliveryCounts: Sendable, Equatable {
        public let sent: Int
        public let pending: Int
        public let failed: Int
    }

    /// The state of every push of `messageId` (zeros when it has none).
    public static func deliveryCounts(messageId: String, on conn: SQLiteConnection) throws(StoreError) -> DeliveryCounts {
        let row = try conn.queryOne("""
            SELECT coalesce(sum(state = 'sent'), 0), coalesce(sum(state = 'pending'), 0),
                   coalesce(sum(state = 'failed'), 0)
            FROM outbox WHERE messageId = ?
            """, [.text(messageId)])
        return DeliveryCounts(sent: Int(try row?.int64(0) ?? 0), pending: Int(try row?.int64(1) ?? 0),
                              failed: Int(try row?.int64(2) ?? 0))
    }
}
