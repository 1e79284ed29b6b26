import SharedStore

/// Both ends of the pull that heals a roster gap (docs/protocol/roster.md §9, docs/adr/0049).
///
/// A member's device: a conversation it did not create whose oldest kept delta
/// (`roster_pending`) arrived long enough ago is a gap that did not fill; it asks the creator
/// at most once per interval (`roster_asked`). The creator's device: the requests the worker
/// recorded (`roster_request`) that are owed an answer, each member answered at most once per
/// interval (`answeredAt`). It only reads: the writes are ``RosterSettlementWriter``'s.
///
/// ```swift
/// let gaps = try RosterRequestRepository.gapsToAsk(seenBy: now - 3_000, askedBy: now - 60_000, now: now, on: conn)
/// try RosterSettlementWriter.recordAsked(conversationId: gaps[0].conversationId, version: gaps[0].version, now: now, on: conn)
/// let owed = try RosterRequestRepository.owed(answeredBy: now - 300_000, on: conn)
/// try RosterSettlementWriter.settle(owed[0], answered: true, now: now, on: conn)
/// ```
public enum RosterRequestRepository {
    /// A gap on this (member's) device: its roster is at `version`.
    public struct Gap: Sendable, Equatable {
        public let conversationId: String
        public let version: Int64
    }

    /// A member's request on this (creator's) device.
    public struct Request: Sendable, Equatable {
        public let conversationId: String
        public let inboxId: String
        /// The version the member said its roster is at.
        public let version: Int64
    }

    // MARK: - A member's device

    private static let gapsSQL = """
        SELECT c.id, c.rosterVersion, p.seen, a.askedAt FROM conversation c
        JOIN (SELECT conversationId, min(receivedAt) AS seen FROM roster_pending GROUP BY conversationId) p
            ON p.conversationId = c.id
        LEFT JOIN roster_asked a ON a.conversationId = c.id
        WHERE c.creatorInboxId != c.inboxId AND c.state = 'active' AND (c.expiresAt IS NULL OR c.expiresAt > ?)
        """

    /// Gaps seen at or before `seenBy` whose conversation was not asked after `askedBy`.
    public static func gapsToAsk(seenBy: Int64, askedBy: Int64, now: Int64, on conn: SQLiteConnection) throws(StoreError) -> [Gap] {
        try conn.query(gapsSQL + " AND p.seen <= ? AND (a.askedAt IS NULL OR a.askedAt <= ?) ORDER BY c.id",
                       [.integer(now), .integer(seenBy), .integer(askedBy)])
            .map { row throws(StoreError) in Gap(conversationId: try row.string(0), version: try row.int64(1)) }
    }

    /// When the next gap will be due (Unix ms), or nil when there is none.
    public static func nextAskAt(waitMs: Int64, everyMs: Int64, now: Int64, on conn: SQLiteConnection) throws(StoreError) -> Int64? {
        try conn.query(gapsSQL, [.integer(now)]).map { row throws(StoreError) -> Int64 in
            max(try row.int64(2) + waitMs, (try row.optionalInt64(3)).map { $0 + everyMs } ?? 0)
        }.min()
    }

    // MARK: - The creator's device

    /// Requests owed an answer whose member was last answered at or before `answeredBy` (or never).
    public static func owed(answeredBy: Int64, on conn: SQLiteConnection) throws(StoreError) -> [Request] {
        try conn.query("""
            SELECT conversationId, inboxId, version FROM roster_request
            WHERE owed = 1 AND (answeredAt IS NULL OR answeredAt <= ?) ORDER BY receivedAt
            """, [.integer(answeredBy)])
            .map { row throws(StoreError) in
                Request(conversationId: try row.string(0), inboxId: try row.string(1), version: try row.int64(2))
            }
    }

    /// The same request, if it is still owed an answer (read again under the write lock).
    public static func stillOwed(_ request: Request, answeredBy: Int64, on conn: SQLiteConnection) throws(StoreError) -> Request? {
        try conn.queryOne("""
            SELECT version FROM roster_request
            WHERE conversationId = ? AND inboxId = ? AND owed = 1 AND (answeredAt IS NULL OR answeredAt <= ?)
            """, [.text(request.conversationId), .text(request.inboxId), .integer(answeredBy)])
            .map { row throws(StoreError) in
                Request(conversationId: request.conversationId, inboxId: request.inboxId, version: try row.int64(0))
            }
    }

    /// When the next deferred request may be answered (Unix ms), or nil when none waits.
    public static func nextAnswerAt(everyMs: Int64, on conn: SQLiteConnection) throws(StoreError) -> Int64? {
        try conn.queryOne("SELECT min(answeredAt) + ? FROM roster_request WHERE owed = 1 AND answeredAt IS NOT NULL",
                          [.integer(everyMs)])?.optionalInt64(0)
    }

    // MARK: - Renames, on the creator's device

    /// A member's latest asked-for name (`sotto/rename:1.0`, docs/protocol/roster.md §10).
    public struct Rename: Sendable, Equatable {
        public let conversationId: String
        public let inboxId: String
        public let profileName: String
    }

    /// Renames owed a delta whose member was last renamed at or before `appliedBy` (or never),
    /// under the write lock: read and settled in the caller's transaction.
    public static func owedRenames(conversationId: String, appliedBy: Int64, on conn: SQLiteConnection) throws(StoreError) -> [Rename] {
        // A rename whose name does not open (docs/adr/0052) is left out: there is nothing to re-issue.
        var out: [Rename] = []
        for row in try conn.query("""
            SELECT inboxId, profileName FROM roster_rename
            WHERE conversationId = ? AND owed = 1 AND (appliedAt IS NULL OR appliedAt <= ?) ORDER BY receivedAt
            """, [.text(conversationId), .integer(appliedBy)]) {
            let inboxId = try row.string(0)
            guard let name = try conn.openedText(row.values[1], .rosterRenameProfileName,
                                                 conversationId: conversationId, rowId: inboxId) else { continue }
            out.append(Rename(conversationId: conversationId, inboxId: inboxId, profileName: name))
        }
        return out
    }

    /// Conversations with a rename owed a delta now.
    public static func conversationsOwingRenames(appliedBy: Int64, on conn: SQLiteConnection) throws(StoreError) -> [String] {
        try conn.query("""
            SELECT DISTINCT conversationId FROM roster_rename
            WHERE owed = 1 AND (appliedAt IS NULL OR appliedAt <= ?) ORDER BY conversationId
            """, [.integer(appliedBy)]).map { row throws(StoreError) in try row.string(0) }
    }

    /// When the next deferred rename may be applied (Unix ms), or nil when none waits.
    public static func nextRenameAt(everyMs: Int64, on conn: SQLiteConnection) throws(StoreError) -> Int64? {
        try conn.queryOne("SELECT min(appliedAt) + ? FROM roster_rename WHERE owed = 1 AND appliedAt IS NOT NULL",
                          [.integer(everyMs)])?.optionalInt64(0)
    }
}
