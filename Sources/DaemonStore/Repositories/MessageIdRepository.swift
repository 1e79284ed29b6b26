import SharedStore

/// Message ids only the daemon looks up: the ids a prefix names (`sotto read 3fa`, as `git`
/// resolves commits) and the conversation each of the outbox's messages belongs to. The worker
/// reads messages through SharedStore's ``MessageRepository``; these are not its SQL.
///
/// ```swift
/// let ids = try MessageIdRepository.ids(conversationId: id, prefix: "3fa", limit: 2, on: conn)
/// let conversations = try MessageIdRepository.conversationIds(of: ["3fa2…"], on: conn)   // [messageId: conversationId]
/// ```
public enum MessageIdRepository {
    /// Up to `limit` ids of the conversation's messages that start with `prefix` (a lowercase
    /// hex prefix), in id order. The id's range drives the search (the primary key), so a
    /// whole id costs one lookup however long the conversation: `+conversationId` keeps
    /// SQLite from scanning the conversation's timeline index instead, which made every page
    /// up (`readMessages` with `before`) cost the whole conversation (docs/adr/0069).
    public static let idsByPrefix = "SELECT id FROM message WHERE +conversationId = ? AND id >= ? AND id < ? ORDER BY id LIMIT ?"

    public static func ids(conversationId: String, prefix: String, limit: Int,
                           on conn: SQLiteConnection) throws(StoreError) -> [String] {
        var out: [String] = []
        for row in try conn.query(idsByPrefix,
                                  [.text(conversationId), .text(prefix), .text(prefix + "g"), .integer(Int64(max(0, limit)))]) {
            out.append(try row.string(0))
        }
        return out
    }

    /// The conversation of each message in `messageIds` that still exists (the outbox's
    /// sending identity, docs/adr/0044).
    public static func conversationIds(of messageIds: Set<String>, on conn: SQLiteConnection) throws(StoreError) -> [String: String] {
        var found: [String: String] = [:]
        for messageId in messageIds {
            if let row = try conn.queryOne("SELECT conversationId FROM message WHERE id = ?", [.text(messageId)]) {
                found[messageId] = try row.string(0)
            }
        }
        return found
    }
}
