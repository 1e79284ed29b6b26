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
}
