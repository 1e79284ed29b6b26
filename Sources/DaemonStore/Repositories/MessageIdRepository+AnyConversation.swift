import SharedStore

// MARK: - A message by id or prefix, in any conversation

extension MessageIdRepository {
    /// Up to `limit` (id, conversationId) pairs of messages, in any conversation, whose id
    /// starts with `prefix` (lowercase hex), in id order: `sotto save 3fa2` names a message
    /// without its conversation. The primary key's range drives it: one lookup for a whole id.
    ///
    /// ```swift
    /// let found = try MessageIdRepository.messages(prefix: "3fa2", limit: 2, on: conn)   // [(id, conversationId)]
    /// ```
    public static func messages(prefix: String, limit: Int,
                                on conn: SQLiteConnection) throws(StoreError) -> [(id: String, conversationId: String)] {
        var out: [(id: String, conversationId: String)] = []
        for row in try conn.query("SELECT id, conversationId FROM message WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
                                  [.text(prefix), .text(prefix + "g"), .integer(Int64(max(0, limit)))]) {
            out.append((try row.string(0), try row.string(1)))
        }
        return out
    }
}
