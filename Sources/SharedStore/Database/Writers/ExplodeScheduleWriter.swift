import SottoCrypto

/// Puts the creator's explode decision in force on the conversation row: the receiving
/// writer calls it after storing a `convos.org/explode_settings:1.0` message, the daemon after
/// sending one (docs/protocol/explode-schedule.md §3). Runs inside the caller's transaction.
///
/// ```swift
/// let applied = try ExplodeScheduleWriter.apply(conversationId: id, creatorInboxId: creator,
///                                               messageId: stored.id, now: now, on: conn)
/// applied.schedule?.expiresAtMs   // nil: cancelled, or no decision at all
/// ```
public enum ExplodeScheduleWriter {
    /// Sets the conversation's `expiresAt` to the decision in force (nil: cancelled or none)
    /// and appends a `conversationExpiresChanged` change naming `messageId` (the decision just
    /// stored in the same transaction by the receiving writer; nil when the creator sends one).
    /// Returns the decision in force and the change's seq.
    @discardableResult
    public static func apply(conversationId: String, creatorInboxId: String, messageId: String?, now: Int64,
                             on conn: SQLiteConnection) throws(StoreError) -> (schedule: ExplodeSchedule?, seq: Int64) {
        let schedule = try ExplodeScheduleRepository.inForce(conversationId: conversationId,
                                                             creatorInboxId: creatorInboxId, on: conn)
        try conn.run("UPDATE conversation SET expiresAt = ? WHERE id = ?",
                     [.optional(schedule?.expiresAtMs), .text(conversationId)])
        let seq = try ChangeLog.append(conn, kind: .conversationExpiresChanged, conversationId: conversationId,
                                       entityId: messageId, now: now)
        return (schedule, seq)
    }
}
