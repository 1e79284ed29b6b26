import SharedStore

/// Read-only queries behind an inbox's protection from sleep (the source app's decision record
/// "Inbox Lifecycle Management"): an inbox with a pending join request or a live invite (not
/// expired, not revoked, not a single-use invite already used) stays awake.
///
/// ```swift
/// let protected = try ProtectionRepository.inboxesWithPendingWork(now: WallClock.nowMs(), on: conn)
/// let waiting = try ProtectionRepository.hasPendingJoinRequest(inboxId: id, on: conn)
/// ```
public enum ProtectionRepository {
    // MARK: - One definition of a live invite

    /// A live invite `i` still lets someone join: not expired at the bound `now`, not revoked,
    /// and not a single-use invite already used. The launch and every later refresh ask the
    /// same question; a launch that ignored revocation kept every inbox with a revoked invite
    /// awake over capacity after a restart.
    static let liveInvite = """
        (i.expiresAt IS NULL OR i.expiresAt > ?) AND i.revokedAt IS NULL
        AND NOT (i.singleUse = 1 AND EXISTS (
            SELECT 1 FROM join_request r WHERE r.inviteId = i.id AND r.state = 'accepted'))
        """

    // MARK: - Queries

    /// Inboxes with a pending join request or a live invite in any of their conversations.
    public static func inboxesWithPendingWork(now: Int64, on conn: SQLiteConnection) throws(StoreError) -> [String] {
        var out: [String] = []
        for row in try conn.query("""
            SELECT DISTINCT c.inboxId FROM conversation c
            WHERE EXISTS (SELECT 1 FROM join_request j WHERE j.conversationId = c.id AND j.state = 'pending')
               OR EXISTS (SELECT 1 FROM invite i WHERE i.conversationId = c.id AND \(liveInvite))
            """, [.integer(now)]) {
            out.append(try row.string(0))
        }
        return out
    }

    /// Conversations with at least one pending join request, by id.
    public static func conversationsWithPendingJoinRequests(on conn: SQLiteConnection) throws(StoreError) -> [String] {
        var out: [String] = []
        for row in try conn.query("SELECT DISTINCT conversationId FROM join_request WHERE state = 'pending' ORDER BY conversationId") {
            out.append(try row.string(0))
        }
        return out
    }

    /// True when a conversation of the inbox has a pending join request.
    public static func hasPendingJoinRequest(inboxId: String, on conn: SQLiteConnection) throws(StoreError) -> Bool {
        try conn.queryOne("""
            SELECT 1 FROM join_request j JOIN conversation c ON c.id = j.conversationId
            WHERE c.inboxId = ? AND j.state = 'pending' LIMIT 1
            """, [.text(inboxId)]) != nil
    }

    /// True when a conversation of the inbox has a live invite at `now`.
    public static func hasLiveInvite(inboxId: String, now: Int64, on conn: SQLiteConnection) throws(StoreError) -> Bool {
        try conn.queryOne("""
            SELECT 1 FROM invite i JOIN conversation c ON c.id = i.conversationId
            WHERE c.inboxId = ? AND \(liveInvite)
            LIMIT 1
            """, [.text(inboxId), .integer(now)]) != nil
    }
}
