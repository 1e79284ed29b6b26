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

    public static func find(topic: String, on conn: SQLiteConnection) throws(StoreError) -> DBConversation? {
        try conn.queryOne("SELECT \(DBConversation.columns) FROM conversation WHERE topic = ?", [.text(topic)])
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

    public static func forInbox(inboxId: String, on conn: SQLiteConnection) throws(StoreError) -> [DBConversation] {
        try decode(on: conn, conn.query("""
            SELECT \(DBConversation.columns) FROM conversation WHERE inboxId = ? ORDER BY createdAt, id
            """, [.text(inboxId)]))
    }

    /// Every conversation, most recently active inbox first (the "Inbox Lifecycle Management" ranking order).
    public static func all(on conn: SQLiteConnection) throws(StoreError) -> [DBConversation] {
        try decode(on: conn, conn.query("""
            SELECT \(DBConversation.columns) FROM conversation
            ORDER BY (SELECT lastActivityAt FROM inbox WHERE inbox.inboxId = conversation.inboxId) IS NULL,
                     (SELECT lastActivityAt FROM inbox WHERE inbox.inboxId = conversation.inboxId) DESC,
                     createdAt DESC
            """))
    }

    /// Resolves a conversation id or a unique prefix of one (as `git` resolves commits).
    public static func resolve(reference: String, on conn: SQLiteConnection) throws(StoreError) -> ResolvedReference {
        guard !reference.isEmpty, reference.utf8.count <= 32, reference.utf8.allSatisfy({ Hex.isDigit($0) }) else {
            return .none
        }
        let rows = try conn.query("""
            SELECT \(DBConversation.columns) FROM conversation WHERE id >= ? AND id < ? ORDER BY id LIMIT 2
            """, [.text(reference.lowercased()), .text(reference.lowercased() + "g")])
        switch rows.count {
        case 0: return .none
        case 1: return .one(try DBConversation(row: rows[0], on: conn))
        default: return .ambiguous
        }
    }

    public enum ResolvedReference: Sendable, Equatable {
        case one(DBConversation)
        case none
        case ambiguous
    }

    private static func decode(on conn: SQLiteConnection, _ rows: [Row]) throws(StoreError) -> [DBConversation] {
        var out: [DBConversation] = []
        for row in rows { out.append(try DBConversation(row: row, on: conn)) }
        return out
    }
}
