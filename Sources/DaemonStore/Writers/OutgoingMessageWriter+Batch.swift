import SharedStore

/// One recorded push attempt of a batch (`OutgoingMessageWriter.recordAttempts`).
///
/// ```swift
/// let attempt = RecordedAttempt(messageId: mid, memberInboxId: them, state: .relayed, nextAttemptAt: now, lastError: nil)
/// ```
public struct RecordedAttempt: Sendable, Equatable {
    public let messageId: String
    public let memberInboxId: String
    public let state: DBOutboxItem.State
    public let nextAttemptAt: Int64
    public let lastError: String?

    public init(messageId: String, memberInboxId: String, state: DBOutboxItem.State, nextAttemptAt: Int64, lastError: String?) {
        self.messageId = messageId
        self.memberInboxId = memberInboxId
        self.state = state
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
    }
}

extension OutgoingMessageWriter {
    /// Records many push attempts in the caller's transaction (docs/adr/0041): each push's row
    /// as `recordAttempt` does (a delivered push stays delivered), then each message's status recomputed and one
    /// `messageStatusChanged` appended once per message, not once per push (a fan-out to 1,000
    /// members recomputed its status over its 1,000 rows 1,000 times). A push whose row is
    /// gone (its conversation exploded meanwhile) is skipped. Returns the ids of the messages
    /// whose rows changed.
    ///
    /// ```swift
    /// try database.write { conn in try OutgoingMessageWriter.recordAttempts(attempts, on: conn) }
    /// ```
    @discardableResult
    public static func recordAttempts(_ attempts: [RecordedAttempt], on conn: SQLiteConnection) throws(OutgoingWriteError) -> [String] {
        try store { () throws(StoreError) -> [String] in
            // A push a receipt already marked delivered stays delivered, as in `recordAttempt`.
            let update = try conn.prepare("""
                UPDATE outbox SET state = CASE WHEN state = 'delivered' THEN state ELSE ?1 END,
                    attempts = attempts + 1, nextAttemptAt = ?2,
                    lastError = CASE WHEN state = 'delivered' THEN NULL ELSE ?3 END
                WHERE messageId = ?4 AND memberInboxId = ?5
                """)
            var changed: [String] = []
            var seen: Set<String> = []
            for attempt in attempts {
                try update.bind([.text(attempt.state.rawValue), .integer(attempt.nextAttemptAt), .optional(attempt.lastError),
                                 .text(attempt.messageId), .text(attempt.memberInboxId)])
                while try update.step() {}
                if conn.changes > 0, seen.insert(attempt.messageId).inserted { changed.append(attempt.messageId) }
            }
            for messageId in changed {
                try MessageDeliveryStatus.recompute(messageId: messageId, on: conn)
                let conversationId = try conn.queryOne("SELECT conversationId FROM message WHERE id = ?",
                                                       [.text(messageId)])?.string(0)
                try ChangeLog.append(conn, kind: .messageStatusChanged, conversationId: conversationId, entityId: messageId)
            }
            return changed
        }
    }
}
