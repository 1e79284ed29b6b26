import SharedStore

/// Forgets the joins the creator refused in one conversation (`join_refusal`, written by the
/// worker's ``JoinRefusalWriter``): dismissed by the user, or superseded by a new `sotto join`
/// of it. ``JoinRefusalRepository`` reads them. Runs inside the caller's transaction.
///
/// ```swift
/// try JoinRefusalDismissal.dismiss(conversationId: id, on: conn)   // sotto dismiss
/// ```
public enum JoinRefusalDismissal {
    /// Returns how many rows went.
    @discardableResult
    public static func dismiss(conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> Int {
        try conn.run("DELETE FROM join_refusal WHERE conversationId = ?", [.text(conversationId)])
    }
}
