/// Read-only queries over `inbox`. The daemon's ranking of inboxes by activity is DaemonStore's
/// `InboxRankingRepository`.
///
/// ```swift
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

}
