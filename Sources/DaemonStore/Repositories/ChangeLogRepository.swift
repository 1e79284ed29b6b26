import SharedStore

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

    /// Changes with `after < seq <= upTo`, read one by one in `order` until the first error:
    /// what can still be read on either side of a damaged page. Returned oldest first, with
    /// the error met (if any).
    public static func readable(after: Int64, upTo: Int64, newestFirst: Bool,
                                on conn: SQLiteConnection) -> (changes: [DBChange], error: StoreError?) {
        var out: [DBChange] = []
        do {
            let statement = try conn.prepare("""
                SELECT \(DBChange.columns) FROM change_log WHERE seq > ? AND seq <= ? ORDER BY seq \(newestFirst ? "DESC" : "ASC")
                """)
            try statement.bind([.integer(after), .integer(upTo)])
            while try statement.step() { out.append(try DBChange(row: statement.row())) }
            return (newestFirst ? out.reversed() : out, nil)
        } catch {
            return (newestFirst ? out.reversed() : out, error)
        }
    }

    /// The highest committed seq, 0 when empty.
    public static func latestSeq(on conn: SQLiteConnection) throws(StoreError) -> Int64 {
        try conn.queryOne("SELECT coalesce(max(seq), 0) FROM change_log")?.int64(0) ?? 0
    }
}
