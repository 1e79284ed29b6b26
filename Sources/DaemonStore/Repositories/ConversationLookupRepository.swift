import SharedStore
import SottoWire

/// The daemon's reads of `conversation` that the worker never runs (docs/adr/0065, 0075): an
/// inbox's conversations, every conversation in the ranking order `sotto ls` shows, and the
/// conversation a person's id or prefix names. The worker's lookups stay in SharedStore's
/// ``ConversationRepository``.
///
/// ```swift
/// if case .one(let conversation) = try ConversationLookupRepository.resolve(reference: "3fa", on: conn) { … }
/// let listed = try ConversationLookupRepository.all(on: conn)
/// ```
public enum ConversationLookupRepository {
    public static func forInbox(inboxId: String, on conn: SQLiteConnection) throws(StoreError) -> [DBConversation] {
        try conversations(conn.query("""
            SELECT \(DBConversation.columns) FROM conversation WHERE inboxId = ? ORDER BY createdAt, id
            """, [.text(inboxId)]), on: conn)
    }

    /// Every conversation, most recently active inbox first (the "Inbox Lifecycle Management" ranking order).
    public static func all(on conn: SQLiteConnection) throws(StoreError) -> [DBConversation] {
        try conversations(conn.query("""
            SELECT \(DBConversation.columns) FROM conversation
            ORDER BY (SELECT lastActivityAt FROM inbox WHERE inbox.inboxId = conversation.inboxId) IS NULL,
                     (SELECT lastActivityAt FROM inbox WHERE inbox.inboxId = conversation.inboxId) DESC,
                     createdAt DESC
            """), on: conn)
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

    /// Every row of `rows` as a conversation, its sealed name opened on `conn`.
    private static func conversations(_ rows: [Row], on conn: SQLiteConnection) throws(StoreError) -> [DBConversation] {
        try rows.map { row throws(StoreError) in try DBConversation(row: row, on: conn) }
    }
}
