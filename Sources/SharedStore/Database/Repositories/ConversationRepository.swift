import SottoWire

/// Read-only queries over `conversation`.
///
/// ```swift
/// let c = try ConversationRepository.find(id: conversationId, on: conn)
/// let mine = try ConversationRepository.forClient(clientId: clientId, on: conn)
/// ```
public enum ConversationRepository {
    public static func find(id: String, on conn: SQLiteConnection) throws(StoreError) -> DBConversation? {
        try conn.queryOne("SELECT \(DBConversation.columns) FROM conversation WHERE id = ?", [.text(id)])
            .map { row throws(StoreError) in try DBConversation(row: row, on: conn) }
    }

    /// The conversations of the inbox routed by `clientId`.
    public static func forClient(clientId: String, on conn: SQLiteConnection) throws(StoreError) -> [DBConversation] {
        try decode(on: conn, conn.query("""
            SELECT \(DBConversation.columns) FROM conversation
            WHERE inboxId = (SELECT inboxId FROM inbox WHERE clientId = ?)
            ORDER BY createdAt, id
            """, [.text(clientId)]))
    }

    private static func decode(on conn: SQLiteConnection, _ rows: [Row]) throws(StoreError) -> [DBConversation] {
        var out: [DBConversation] = []
        for row in rows { out.append(try DBConversation(row: row, on: conn)) }
        return out
    }
}
