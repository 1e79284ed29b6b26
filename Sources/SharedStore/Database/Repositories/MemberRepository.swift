/// Read-only queries over `member` and `member_profile`.
///
/// ```swift
/// let members = try MemberRepository.members(of: conversationId, on: conn)
/// let name = try MemberRepository.profileName(conversationId: id, inboxId: sender, on: conn)
/// ```
public enum MemberRepository {
    public static func members(of conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> [DBMember] {
        var out: [DBMember] = []
        for row in try conn.query("""
            SELECT \(DBMember.columns) FROM member WHERE conversationId = ? ORDER BY inboxId
            """, [.text(conversationId)]) {
            out.append(try DBMember(row: row))
        }
        return out
    }

    public static func member(conversationId: String, inboxId: String,
                              on conn: SQLiteConnection) throws(StoreError) -> DBMember? {
        try conn.queryOne("""
            SELECT \(DBMember.columns) FROM member WHERE conversationId = ? AND inboxId = ?
            """, [.text(conversationId), .text(inboxId)])
            .map { row throws(StoreError) in try DBMember(row: row) }
    }

    public static func profileName(conversationId: String, inboxId: String,
                                   on conn: SQLiteConnection) throws(StoreError) -> String? {
        try conn.queryOne("""
            SELECT name FROM member_profile WHERE conversationId = ? AND inboxId = ?
            """, [.text(conversationId), .text(inboxId)]).flatMap { row throws(StoreError) in
                try conn.openedText(row.values[0], .memberProfileName, conversationId: conversationId, rowId: inboxId)
            }
    }
}
