import SharedStore

/// The members' profile names of a conversation, opened from their sealed cells: what the
/// daemon shows beside messages (`sotto read`, a rename's answer, a removal's, the change
/// feed's sender name). The worker reads none.
///
/// ```swift
/// let names = try MemberNamesRepository.profileNames(of: conversationId, on: conn)
/// names[message.senderInboxId]      // nil: no name, or it did not open
/// let sender = try MemberNamesRepository.profileName(conversationId: id, inboxId: sender, on: conn)
/// ```
public enum MemberNamesRepository {
    /// inboxId → profile name, for the members that have a non-empty one.
    public static func profileNames(of conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> [String: String] {
        var out: [String: String] = [:]
        for row in try conn.query("""
            SELECT inboxId, name FROM member_profile WHERE conversationId = ? AND name IS NOT NULL
            """, [.text(conversationId)]) {
            let inboxId = try row.string(0)
            if let name = try conn.openedText(row.values[1], .memberProfileName, conversationId: conversationId,
                                              rowId: inboxId), !name.isEmpty {
                out[inboxId] = name
            }
        }
        return out
    }

    /// One member's profile name, nil when it has none or it does not open.
    public static func profileName(conversationId: String, inboxId: String,
                                   on conn: SQLiteConnection) throws(StoreError) -> String? {
        try conn.queryOne("""
            SELECT name FROM member_profile WHERE conversationId = ? AND inboxId = ?
            """, [.text(conversationId), .text(inboxId)]).flatMap { row throws(StoreError) in
                try conn.openedText(row.values[0], .memberProfileName, conversationId: conversationId, rowId: inboxId)
            }
    }
}
