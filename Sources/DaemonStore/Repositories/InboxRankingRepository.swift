import SharedStore

/// The "Inbox Lifecycle Management" ranking the daemon's inbox LRU launches and rebalances
/// from: inboxes most recently active first, read from the `inbox_by_activity` index. The
/// worker never ranks inboxes.
///
/// ```swift
/// let warm = try InboxRankingRepository.rankedByActivity(limit: 20, on: conn)
/// ```
public enum InboxRankingRepository {
    /// The SQL of ``rankedByActivity(limit:on:)``, exposed so tests can check its plan.
    public static let rankedByActivitySQL = """
        SELECT \(DBInbox.columns) FROM inbox
        ORDER BY lastActivityAt DESC, inboxId DESC LIMIT ?
        """

    /// Inboxes most recently active first; never-active ones (NULL) last, because SQLite
    /// sorts NULL lowest. Walks `inbox_by_activity` backwards: no sort, no message scan.
    public static func rankedByActivity(limit: Int, on conn: SQLiteConnection) throws(StoreError) -> [DBInbox] {
        try conn.query(rankedByActivitySQL, [.integer(Int64(max(0, limit)))]).map { row throws(StoreError) in try DBInbox(row: row) }
    }
}
