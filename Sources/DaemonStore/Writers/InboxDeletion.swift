import SharedStore
import SottoWire

/// Deletes every row of one inbox in the caller's transaction: the inbox, its conversations
/// and (by cascade) their members, profiles, invites, join requests, messages, outbox and
/// local state, plus the change_log rows that name those conversations. One
/// `inboxDeleted` entry is appended so the other process learns of it, and an
/// `inbox_tombstone` row names the identity whose keystore files must go next (ADR 0016):
/// committed together, so a crash after the commit leaves a record of what to finish.
///
/// ```swift
/// try conn.immediateTransaction { () throws(StoreError) in
///     try InboxDeletion.delete(inboxId: id, on: conn)
/// }
/// // after the commit: wipe the keystore files, then
/// try InboxDeletion.finish(InboxTombstone(clientId: c, inboxId: id), on: conn)
/// ```
public enum InboxDeletion {
    /// Returns the change_log seq, or nil when there was no such inbox (nothing written).
    @discardableResult
    public static func delete(inboxId: String, now: Int64 = WallClock.nowMs(),
                              on conn: SQLiteConnection) throws(StoreError) -> Int64? {
        guard let row = try conn.queryOne("SELECT clientId FROM inbox WHERE inboxId = ?", [.text(inboxId)]) else {
            return nil
        }
        try conn.run("""
            INSERT OR REPLACE INTO inbox_tombstone(clientId, inboxId, deletedAt) VALUES (?, ?, ?)
            """, [.text(try row.string(0)), .text(inboxId), .integer(now)])
        try conn.run("""
            DELETE FROM change_log WHERE conversationId IN (SELECT id FROM conversation WHERE inboxId = ?)
            """, [.text(inboxId)])
        try conn.run("DELETE FROM change_log WHERE conversationId IS NULL AND entityId = ?", [.text(inboxId)])
        // Foreign keys are ON on every connection (ConnectionConfigurator), so this cascades.
        try conn.run("DELETE FROM inbox WHERE inboxId = ?", [.text(inboxId)])
        return try ChangeLog.append(conn, kind: .inboxDeleted, conversationId: nil, entityId: inboxId)
    }

    /// Forgets a tombstone once its keystore files are gone.
    public static func finish(_ tombstone: InboxTombstone, on conn: SQLiteConnection) throws(StoreError) {
        try conn.run("DELETE FROM inbox_tombstone WHERE clientId = ?", [.text(tombstone.clientId)])
    }
}
