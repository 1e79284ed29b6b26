/// Read-only queries over `inbox`.
///
/// ```swift
/// let warm = try InboxRepository.rankedByActivity(limit: 20, on: conn)   // the "Inbox Lifecycle Management" ranking
/// let inbox = try InboxRepository.forClient(clientId: payload.clientId, on: conn)
/// ```
public enum InboxRepository {
    public static func find(inboxId: String, on conn: SQLiteConnection) throws(StoreError) -> DBInbox? {
        try conn.queryOne("SELECT \(DBInbox.columns) FROM inbox WHERE inboxId = ?", [.text(inboxId)])
            .map { row throws(StoreError) in try DBInbox(row: row) }
    }

    public static func forClient(clientId: String, on conn: SQLiteConnection) throws(StoreError) -> DBInbox? {
        try conn.queryOne("SELECT \(DBInbox.columns) FROM inbox WHERE clientId = ?", [.text(clientId)])
            .map { row throws(StoreError) in try DBInbox(row: row) }
    }

    /// The SQL of ``rankedByActivity(limit:on:)``, exposed so tests can check its plan.
    public static let rankedByActivitySQL = """
        SELECT \(DBInbox.columns) FROM inbox
        ORDER BY lastActivityAt DESC, inboxId DESC LIMIT ?
        """

    /// Inboxes most recently active first; never-active ones (NULL) last, because SQLite
    /// sorts NULL lowest. Walks `inbox_by_activity` backwards: no sort, no message scan.
    public static func rankedByActivity(limit: Int, on conn: SQLiteConnection) throws(StoreError) -> [DBInbox] {
        try decode(conn.query(rankedByActivitySQL, [.integer(Int64(max(0, limit)))]))
    }

    private static func decode(_ rows: [Row]) throws(StoreError) -> [DBInbox] {
        var out: [DBInbox] = []
        for row in rows { out.append(try DBInbox(row: row)) }
        return out
    }
}
