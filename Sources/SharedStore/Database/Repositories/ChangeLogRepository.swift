/// Read-only queries over `change_log`.
///
/// ```swift
/// let changes = try ChangeLogRepository.since(seq: cursor, limit: 200, on: conn)
/// cursor = changes.last?.seq ?? cursor
/// ```
public enum ChangeLogRepository {
    /// Changes with `seq > seq`, oldest first.
    public static func since(seq: Int64, limit: Int, on conn: SQLiteConnection) throws(StoreError) -> [DBChange] {
        var out: [DBChange] = []
        for row in try conn.query("""
            SELECT \(DBChange.columns) FROM change_log WHERE seq > ? ORDER BY seq LIMIT ?
            """, [.integer(seq), .integer(Int64(max(0, limit)))]) {
            out.append(try DBChange(row: row))
        }
        return out
    }

    /// The highest committed seq, 0 when empty.
    public static func latestSeq(on conn: SQLiteConnection) throws(StoreError) -> Int64 {
        try conn.queryOne("SELECT coalesce(max(seq), 0) FROM change_log")?.int64(0) ?? 0
    }
}
