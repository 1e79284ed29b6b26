/// Records a member's `sotto/roster_request:1.0` (and `sotto/rename:1.0`) on the creator's device (docs/protocol/roster.md
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

    /// A member's `sotto/rename:1.0` (docs/protocol/roster.md §10): its latest name, owed until
    /// the creator's daemon re-issues it as a roster delta. Returns the change_log seq.
    public static func recordRename(conversationId: String, inboxId: String, profileName: String, now: Int64,
                                    on conn: SQLiteConnection) throws(StoreError) -> Int64 {
        try conn.run("""
            INSERT INTO roster_rename(conversationId, inboxId, profileName, receivedAt, owed) VALUES (?, ?, ?, ?, 1)
            ON CONFLICT(conversationId, inboxId) DO UPDATE SET
                profileName = excluded.profileName, receivedAt = excluded.receivedAt, owed = 1
            """, [.text(conversationId), .text(inboxId),
                  try conn.sealedCell(text: profileName, .rosterRenameProfileName, conversationId: conversationId,
                                      rowId: inboxId),
                  .integer(now)])
        return try ChangeLog.append(conn, kind: .rosterRequested, conversationId: conversationId, entityId: inboxId, now: now)
    }
}
