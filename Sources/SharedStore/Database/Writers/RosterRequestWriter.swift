/// Records a member's `sotto/roster_request:1.0` on the creator's device (docs/protocol/roster.md
/// §9), in the worker's transaction, after `SenderRules` checked the signer is a member who is
/// not the creator and this device is the creator's. One row per member: a repeat, a replay or
/// a flood rewrites it, so a hostile member grows nothing here; the daemon answers it under
/// its own rate limit (`RosterRequestRepository`, docs/adr/0049).
///
/// ```swift
/// let seq = try RosterRequestWriter.record(conversationId: cid, inboxId: member, version: 41, now: now, on: conn)
/// ```
public enum RosterRequestWriter {
    /// Returns the change_log seq that wakes the creator's daemon.
    public static func record(conversationId: String, inboxId: String, version: Int64, now: Int64,
                              on conn: SQLiteConnection) throws(StoreError) -> Int64 {
        try conn.run("""
            INSERT INTO roster_request(conversationId, inboxId, version, receivedAt, owed) VALUES (?, ?, ?, ?, 1)
            ON CONFLICT(conversationId, inboxId) DO UPDATE SET
                version = excluded.version, receivedAt = excluded.receivedAt, owed = 1
            """, [.text(conversationId), .text(inboxId), .integer(version), .integer(now)])
        return try ChangeLog.append(conn, kind: .rosterRequested, conversationId: conversationId, entityId: inboxId, now: now)
    }
}
