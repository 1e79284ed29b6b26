import SharedStore
import SottoCrypto
import SottoWire

/// What the creator's daemon owes after members left (docs/protocol/leave-remove.md): the
/// conversations in which a `sotto/leave:1.0` arrived after the creator's last membership
/// or roster delta, so the creator sends the change (once, also after a restart).
///
/// ```swift
/// if try LeaveRepository.membershipOwed(conversationId: id, creatorInboxId: me, on: conn) { … announce … }
/// let owed = try LeaveRepository.conversationsOwingMembership(on: conn)   // at launch
/// ```
public enum LeaveRepository {
    static let owedCondition = """
        EXISTS (SELECT 1 FROM message l WHERE l.conversationId = c.id AND l.contentType = ?1 AND l.isOutgoing = 0
                  AND l.receivedAt >= coalesce((SELECT max(s.receivedAt) FROM message s
                                                WHERE s.conversationId = c.id AND s.isOutgoing = 1 AND s.contentType IN (?2, ?4)), 0))
        """

    /// Whether this creator's device still owes the members an updated membership.
    public static func membershipOwed(conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> Bool {
        try conn.queryOne("""
            SELECT 1 FROM conversation c WHERE c.id = ?3 AND c.creatorInboxId = c.inboxId AND \(owedCondition)
            """, [.text(ContentType.leave), .text(ContentType.membership), .text(conversationId),
                  .text(ContentType.rosterDelta)]) != nil
    }

    /// Every conversation this device created that owes one.
    public static func conversationsOwingMembership(on conn: SQLiteConnection) throws(StoreError) -> [String] {
        try conn.query("""
            SELECT c.id FROM conversation c WHERE c.creatorInboxId = c.inboxId AND \(owedCondition)
            """, [.text(ContentType.leave), .text(ContentType.membership), .null,
                  .text(ContentType.rosterDelta)]).map { row throws(StoreError) in try row.string(0) }
    }

    /// Who left since the creator's last roster message: the members its next delta removes.
    public static func leaversOwed(conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> [String] {
        try conn.query("""
            SELECT DISTINCT l.senderInboxId FROM message l, conversation c
            WHERE c.id = ?3 AND l.conversationId = c.id AND l.contentType = ?1 AND l.isOutgoing = 0
              AND l.receivedAt >= coalesce((SELECT max(s.receivedAt) FROM message s
                                            WHERE s.conversationId = c.id AND s.isOutgoing = 1
                                              AND s.contentType IN (?2, ?4)), 0)
            ORDER BY l.senderInboxId
            """, [.text(ContentType.leave), .text(ContentType.membership), .text(conversationId),
                  .text(ContentType.rosterDelta)]).map { row throws(StoreError) in try row.string(0) }
    }
}
