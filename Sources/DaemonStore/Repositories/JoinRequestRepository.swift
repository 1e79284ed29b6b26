import SharedStore

/// Read-only queries over `join_request`.
///
/// ```swift
/// let pending = try JoinRequestRepository.pending(conversationId: id, on: conn)
/// ```
public enum JoinRequestRepository {
    public static func pending(conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> [DBJoinRequest] {
        var out: [DBJoinRequest] = []
        for row in try conn.query("""
            SELECT \(DBJoinRequest.columns) FROM join_request
            WHERE conversationId = ? AND state = 'pending' ORDER BY id
            """, [.text(conversationId)]) {
            out.append(try DBJoinRequest(row: row, on: conn))
        }
        return out
    }
}
