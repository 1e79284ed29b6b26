import SharedStore

/// The daemon's writes on both ends of the roster pull (docs/protocol/roster.md §9-10,
/// docs/adr/0049): a member's device records that it asked the creator (`roster_asked`); the
/// creator's device settles the requests and renames the worker recorded
/// (``RosterRequestWriter``) and stores an asked-for name. What is owed is read by
/// ``RosterRequestRepository``; each call runs inside the caller's transaction.
///
/// ```swift
/// try RosterSettlementWriter.recordAsked(conversationId: gap.conversationId, version: gap.version, now: now, on: conn)
/// try RosterSettlementWriter.settle(request, answered: true, now: now, on: conn)
/// try RosterSettlementWriter.setProfileName("Ann", inboxId: member, conversationId: id, on: conn)
/// ```
public enum RosterSettlementWriter {
    // MARK: - A member's device

    /// This device asked the creator for the full roster at `version`.
    public static func recordAsked(conversationId: String, version: Int64, now: Int64, on conn: SQLiteConnection) throws(StoreError) {
        try conn.run("INSERT OR REPLACE INTO roster_asked(conversationId, version, askedAt) VALUES (?, ?, ?)",
                     [.text(conversationId), .integer(version), .integer(now)])
    }

    // MARK: - The creator's device

    /// The request needs nothing more; `answered` when the full roster went to the member.
    public static func settle(_ request: RosterRequestRepository.Request, answered: Bool, now: Int64, on conn: SQLiteConnection) throws(StoreError) {
        try conn.run("""
            UPDATE roster_request SET owed = 0, answeredAt = CASE WHEN ? THEN ? ELSE answeredAt END
            WHERE conversationId = ? AND inboxId = ?
            """, [.integer(answered ? 1 : 0), .integer(now), .text(request.conversationId), .text(request.inboxId)])
    }

    /// The rename needs nothing more; `applied` when a delta carried it.
    public static func settle(_ rename: RosterRequestRepository.Rename, applied: Bool, now: Int64, on conn: SQLiteConnection) throws(StoreError) {
        try conn.run("""
            UPDATE roster_rename SET owed = 0, appliedAt = CASE WHEN ? THEN ? ELSE appliedAt END
            WHERE conversationId = ? AND inboxId = ?
            """, [.integer(applied ? 1 : 0), .integer(now), .text(rename.conversationId), .text(rename.inboxId)])
    }

    /// The creator's device sets a member's (or its own) profile name, before the delta that
    /// tells the others is composed from the member rows.
    public static func setProfileName(_ name: String, inboxId: String, conversationId: String,
                                      on conn: SQLiteConnection) throws(StoreError) {
        try conn.run("INSERT OR REPLACE INTO member_profile(conversationId, inboxId, name) VALUES (?, ?, ?)",
                     [.text(conversationId), .text(inboxId),
                      try conn.sealedCell(text: name, .memberProfileName, conversationId: conversationId, rowId: inboxId)])
    }
}
