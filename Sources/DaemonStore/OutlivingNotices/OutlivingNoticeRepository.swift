import SharedStore

/// Read-only queries over the notices that outlive their conversation (docs/adr/0034):
/// which are due, when the next one is, and how many wait for how many members.
///
/// ```swift
/// let due = try OutlivingNoticeRepository.due(now: WallClock.nowMs(), limit: 64, on: conn)
/// let (waiting, members) = try OutlivingNoticeRepository.counts(on: conn)
/// ```
public enum OutlivingNoticeRepository {
    /// Notices whose next attempt time has come, earliest first, each with its sealed body.
    public static func due(now: Int64, limit: Int, on conn: SQLiteConnection) throws(StoreError) -> [OutlivingNotice] {
        var out: [OutlivingNotice] = []
        for row in try conn.query("""
            SELECT \(OutlivingNotice.columns) FROM outliving_notice n
            LEFT JOIN outliving_notice_body b ON b.bodyId = n.bodyId
            WHERE n.nextAttemptAt <= ? ORDER BY n.nextAttemptAt, n.id LIMIT ?
            """, [.integer(now), .integer(Int64(max(0, limit)))]) {
            out.append(try OutlivingNotice(row: row))
        }
        return out
    }

    /// When the earliest waiting notice is due, nil when none waits.
    public static func nextAttempt(on conn: SQLiteConnection) throws(StoreError) -> Int64? {
        try conn.queryOne("SELECT min(nextAttemptAt) FROM outliving_notice")?.optionalInt64(0)
    }

    /// How many notices wait, and for how many members (distinct mailbox ids).
    public static func counts(on conn: SQLiteConnection) throws(StoreError) -> (notices: Int64, members: Int64) {
        guard let row = try conn.queryOne("SELECT count(*), count(DISTINCT clientId) FROM outliving_notice") else {
            return (0, 0)
        }
        return (try row.int64(0), try row.int64(1))
    }
}
