/// Read-only queries over `member`. Profile names are the daemon's reads (DaemonStore's
/// `MemberNamesRepository`).
///
/// ```swift
/// let members = try MemberRepository.members(of: conversationId, on: conn)
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
}
