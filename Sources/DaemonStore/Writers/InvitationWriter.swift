import SharedStore
import SottoWire

/// A row of `invite`: what the creator keeps to check a join request against.
///
/// ```swift
/// let invite = try InvitationWriter.invite(id: request.inviteId, on: conn)
/// invite?.isValid(at: request.receivedAt)
/// ```
public struct DBInvite: Sendable, Equatable {
    public var id: String
    public var conversationId: String
    public var secret: String
    public var createdAt: Int64
    public var expiresAt: Int64?
    /// At most one join request is accepted with it.
    public var singleUse: Bool
    /// When the creator revoked it; a request decided after that is refused.
    public var revokedAt: Int64?

    public init(id: String, conversationId: String, secret: String, createdAt: Int64, expiresAt: Int64?,
                singleUse: Bool = false, revokedAt: Int64? = nil) {
        self.id = id
        self.conversationId = conversationId
        self.secret = secret
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.singleUse = singleUse
        self.revokedAt = revokedAt
    }

    /// True while the invite has not expired at `ms`.
    public func isValid(at ms: Int64) -> Bool { expiresAt.map { ms < $0 } ?? true }
}

/// The creator's side of the invite flow (PROTOCOL §5–§6): store an invite, decide a join
/// request (accept: the requester becomes a member; reject: nothing else changes), and set
/// a conversation's explosion time. Each call runs in the caller's transaction and appends
/// its change_log entry there.
///
/// ```swift
/// try db.write { conn in
///     try InvitationWriter.insert(DBInvite(id: i, conversationId: c, secret: s, createdAt: now, expiresAt: nil), on: conn)
/// }
/// ```
public enum InvitationWriter {
    // MARK: Invites

    public static func insert(_ invite: DBInvite, on conn: SQLiteConnection) throws(StoreError) {
        try conn.run("""
            INSERT INTO invite(id, conversationId, secret, createdAt, expiresAt, singleUse, revokedAt)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [.text(invite.id), .text(invite.conversationId), .text(invite.secret),
                  .integer(invite.createdAt), .optional(invite.expiresAt), .integer(invite.singleUse ? 1 : 0),
                  .optional(invite.revokedAt)])
    }

    public static func invite(id: String, on conn: SQLiteConnection) throws(StoreError) -> DBInvite? {
        try conn.queryOne("SELECT \(inviteColumns) FROM invite WHERE id = ?", [.text(id)]).map(decodeInvite)
    }

    /// The conversation's invites, oldest first.
    public static func invites(conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> [DBInvite] {
        try conn.query("SELECT \(inviteColumns) FROM invite WHERE conversationId = ? ORDER BY createdAt, id",
                       [.text(conversationId)]).map(decodeInvite)
    }

    /// Marks the invite revoked at `now` (a second revoke keeps the first time). Returns
    /// false when it was already revoked.
    @discardableResult
    public static func revoke(inviteId: String, now: Int64, on conn: SQLiteConnection) throws(StoreError) -> Bool {
        try conn.run("UPDATE invite SET revokedAt = ? WHERE id = ? AND revokedAt IS NULL", [.integer(now), .text(inviteId)]) == 1
    }

    /// Whether a join request with this invite was accepted already (a single-use invite is
    /// then used up).
    public static func isUsed(inviteId: String, on conn: SQLiteConnection) throws(StoreError) -> Bool {
        try conn.queryOne("SELECT 1 FROM join_request WHERE inviteId = ? AND state = 'accepted' LIMIT 1",
                          [.text(inviteId)]) != nil
    }

    private static let inviteColumns = "id, conversationId, secret, createdAt, expiresAt, singleUse, revokedAt"

    private static func decodeInvite(_ row: Row) throws(StoreError) -> DBInvite {
        DBInvite(id: try row.string(0), conversationId: try row.string(1), secret: try row.string(2),
                 createdAt: try row.int64(3), expiresAt: try row.optionalInt64(4), singleUse: try row.int64(5) != 0,
                 revokedAt: try row.optionalInt64(6))
    }

    // MARK: Join requests

    /// Marks a pending request accepted and adds (or refreshes) the requester as a member with
    /// its profile name. Returns the change_log seq (`membersChanged`), or nil when the request
    /// was not pending (nothing written).
    @discardableResult
    public static func accept(_ request: DBJoinRequest, now: Int64 = WallClock.nowMs(),
                              on conn: SQLiteConnection) throws(StoreError) -> Int64? {
        let changed = try conn.run("UPDATE join_request SET state = 'accepted' WHERE id = ? AND state = 'pending'",
                                   [.integer(request.id)])
        guard changed == 1 else { return nil }
        try conn.run("""
            INSERT OR REPLACE INTO member(conversationId, inboxId, publicKey, endpoint, clientId, role)
            VALUES (?, ?, ?, ?, ?, 'member')
            """, [.text(request.conversationId), .text(request.requesterInboxId),
                  .text(request.requesterPublicKey.lowercased()), .text(request.endpoint), .text(request.clientId)])
        try conn.run("INSERT OR REPLACE INTO member_profile(conversationId, inboxId, name) VALUES (?, ?, ?)",
                     [.text(request.conversationId), .text(request.requesterInboxId),
                      try conn.sealedCell(text: request.profileName, .memberProfileName,
                                          conversationId: request.conversationId, rowId: request.requesterInboxId)])
        return try ChangeLog.append(conn, kind: .membersChanged, conversationId: request.conversationId,
                                    entityId: request.messageId, now: now)
    }

    /// Marks a pending request rejected. Returns false when it was not pending.
    @discardableResult
    public static func reject(_ request: DBJoinRequest, on conn: SQLiteConnection) throws(StoreError) -> Bool {
        try conn.run("UPDATE join_request SET state = 'rejected' WHERE id = ? AND state = 'pending'",
                     [.integer(request.id)]) == 1
    }

    // MARK: Explosion

    /// Sets the conversation's expiresAt unless an earlier (or equal) one is stored: exploding
    /// is idempotent and never postponed. Returns the stored value, or nil when there is no
    /// such conversation.
    @discardableResult
    public static func setExpiresAt(conversationId: String, expiresAtMs: Int64, now: Int64 = WallClock.nowMs(),
                                    on conn: SQLiteConnection) throws(StoreError) -> Int64? {
        let changed = try conn.run("""
            UPDATE conversation SET expiresAt = ?1 WHERE id = ?2 AND (expiresAt IS NULL OR expiresAt > ?1)
            """, [.integer(expiresAtMs), .text(conversationId)])
        if changed == 1 {
            try ChangeLog.append(conn, kind: .conversationExpiresChanged, conversationId: conversationId,
                                 entityId: nil, now: now)
        }
        return try conn.queryOne("SELECT expiresAt FROM conversation WHERE id = ?", [.text(conversationId)])?
            .optionalInt64(0)
    }

    /// Member rows with their profile names, as a membership message lists them.
    public static func memberEntries(conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> [MemberEntry] {
        try conn.query("""
            SELECT m.inboxId, m.publicKey, m.endpoint, m.clientId, p.name FROM member m
            LEFT JOIN member_profile p ON p.conversationId = m.conversationId AND p.inboxId = m.inboxId
            WHERE m.conversationId = ? ORDER BY m.role = 'creator' DESC, m.inboxId
            """, [.text(conversationId)]).map { row throws(StoreError) in
            let inboxId = try row.string(0)
            return MemberEntry(inboxId: inboxId, publicKey: try row.string(1), endpoint: try row.string(2),
                               clientId: try row.string(3),
                               profileName: try conn.openedText(row.values[4], .memberProfileName,
                                                                conversationId: conversationId, rowId: inboxId))
        }
    }
}
