/// Deletes every row of one inbox in the caller's transaction: the inbox, its conversations
/// and (by cascade) their members, profiles, invites, join requests, messages, outbox and
/// local state, plus the change_log rows that name those conversations. One
/// `inboxDeleted` entry is appended so the other process learns of it.
///
/// ```swift
/// try conn.immediateTransaction { () throws(StoreError) in
///     try InboxDeletion.delete(inboxId: id, on: conn)
/// }
/// ```
public enum InboxDeletion {
    /// Returns the change_log seq, or nil when there was no such inbox (nothing written).
    @discardableResult
    public static func delete(inboxId: String, on conn: SQLiteConnection) throws(StoreError) -> Int64? {
        guard try conn.queryOne("SELECT 1 FROM inbox WHERE inboxId = ?", [.text(inboxId)]) != nil else {
            return nil
        }
        try conn.run("""
            DELETE FROM change_log WHERE conversationId IN (SELECT id FROM conversation WHERE inboxId = ?)
            """, [.text(inboxId)])
        try conn.run("DELETE FROM change_log WHERE conversationId IS NULL AND entityId = ?", [.text(inboxId)])
        // Foreign keys are ON on every connection (ConnectionConfigurator), so this cascades.
        try conn.run("DELETE FROM inbox WHERE inboxId = ?", [.text(inboxId)])
        return try ChangeLog.append(conn, kind: .inboxDeleted, conversationId: nil, entityId: inboxId)
    }
}
