import SharedStore

/// Read-only queries over `conversation_local_state`.
///
/// ```swift
/// let unread = try LocalStateRepository.state(of: conversationId, on: conn)?.unreadCount ?? 0
/// ```
public enum LocalStateRepository {
    public static func state(of conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> DBLocalState? {
        try conn.queryOne("""
            SELECT \(DBLocalState.columns) FROM conversation_local_state WHERE conversationId = ?
            """, [.text(conversationId)])
            .map { row throws(StoreError) in try DBLocalState(row: row) }
    }
}
