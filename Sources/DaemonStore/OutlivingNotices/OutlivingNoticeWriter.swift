import SharedStore
import SottoCrypto
import SottoWire

/// Where a notice outlives its conversation (docs/adr/0034). `adopt` runs in the transaction
/// that deletes an inbox (ADR 0016) and moves the still-pending pushes of its explode messages
/// (``OutlivingNotice/contentTypes``) out of the outbox before the cascade deletes them: a
/// crash leaves either the outbox rows (the conversation is still there, the deletion runs
/// again) or the notices, never neither. The outbox's sender then delivers them like any push
/// and records each attempt here: delivered or refused for good, the notice is deleted; else
/// it is retried with the outbox's backoff until `dropExpired` removes it.
///
/// ```swift
/// try conn.immediateTransaction { () throws(StoreError) in
///     try OutlivingNoticeWriter.adopt(inboxId: id, now: now, on: conn)
///     try InboxDeletion.delete(inboxId: id, on: conn)
/// }
/// try OutlivingNoticeWriter.record(id: notice.id, .retry(at: now + 2_000, error: "connect: refused"), on: conn)
/// ```
public enum OutlivingNoticeWriter {
    /// What became of one delivery attempt.
    public enum Outcome: Sendable, Equatable {
        /// Acked by the member's device, or stored by its relay: the notice is done.
        case delivered
        /// Refused for good (an endpoint that can never work, a device that no longer knows
        /// the identity): nothing a retry could fix, the notice is dropped.
        case refused(String)
        /// Unreachable or a retryable refusal: try again at `at`.
        case retry(at: Int64, error: String)
    }

    /// Moves every pending push of the inbox's outgoing outliving messages into the notice
    /// queue, keeping its retry state. Call it inside the deleting transaction, before
    /// ``InboxDeletion/delete(inboxId:now:on:)``. Returns how many notices it queued.
    @discardableResult
    public static func adopt(inboxId: String, now: Int64, on conn: SQLiteConnection) throws(StoreError) -> Int {
        let types = OutlivingNotice.contentTypes
        let marks = Array(repeating: "?", count: types.count).joined(separator: ", ")
        let rows = try conn.query("""
            SELECT o.endpoint, o.payload, o.attempts, o.nextAttemptAt, o.lastError, o.messageId
            FROM outbox o JOIN message m ON m.id = o.messageId JOIN conversation c ON c.id = m.conversationId
            WHERE c.inboxId = ? AND m.isOutgoing = 1 AND o.state = 'pending' AND m.contentType IN (\(marks))
            ORDER BY o.nextAttemptAt
            """, [.text(inboxId)] + types.map(SQLiteValue.text))
        let insert = try conn.prepare("""
            INSERT INTO outliving_notice(clientId, endpoint, payload, bodyId, attempts, nextAttemptAt, lastError, queuedAt)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        var queued = 0
        for row in rows {
            let payload = try row.blob(1)
            // The push was built and checked by this daemon; one that does not decode could
            // never be delivered either (the outbox would mark it failed).
            guard let push = try? PushPayload.decode(payload) else { continue }
            // An explode's or a leave's content is a few dozen bytes and travels inline; a push
            // by reference (docs/adr/0032) would take its body along, once, in this transaction:
            // the message's `outbox_body` row goes with the cascade.
            if let hint = push.body {
                try conn.run("""
                    INSERT OR IGNORE INTO outliving_notice_body(bodyId, sealed)
                    SELECT bodyId, sealed FROM outbox_body WHERE messageId = ? AND bodyId = ?
                    """, [.text(try row.string(5)), .text(hint.id)])
                // Without its body the push could never be delivered (a pending push keeps it,
                // so this does not happen); no notice then, rather than one retried for 30 days.
                guard try conn.queryOne("SELECT 1 FROM outliving_notice_body WHERE bodyId = ?", [.text(hint.id)]) != nil
                else { continue }
            }
            // The topic names the conversation in clear; PROTOCOL 1.1 lets a push omit it (the
            // recipient takes its identity's one conversation, as for a relay's push): the
            // notice keeps the same envelope and nothing that names the conversation.
            let anonymous = PushPayload(clientId: push.clientId, topic: nil, envelope: push.envelope, body: push.body).encode()
            try insert.bind([.text(push.clientId), .text(try row.string(0)), .blob(anonymous), .optional(push.body?.id),
                             .integer(try row.int64(2)), .integer(try row.int64(3)), .optional(try row.optionalString(4)),
                             .integer(now)])
            while try insert.step() {}
            queued += 1
        }
        return queued
    }

    /// Queues one inline push that has no message row of its own: a delivery receipt
    /// (docs/protocol/receipts.md §4). It is delivered, retried and aged out like any notice.
    /// The topic is dropped, as `adopt` does: the queue names no conversation.
    public static func queue(payload: PushPayload, endpoint: String, now: Int64, on conn: SQLiteConnection) throws(StoreError) {
        let anonymous = PushPayload(clientId: payload.clientId, topic: nil, envelope: payload.envelope).encode()
        try conn.run("""
            INSERT INTO outliving_notice(clientId, endpoint, payload, bodyId, attempts, nextAttemptAt, lastError, queuedAt)
            VALUES (?, ?, ?, NULL, 0, ?, NULL, ?)
            """, [.text(payload.clientId), .text(endpoint), .blob(anonymous), .integer(now), .integer(now)])
    }

    /// Records one attempt: a delivered or refused notice is deleted (with its body once no
    /// other notice names it); a retry keeps it with the next attempt time and the reason.
    public static func record(id: Int64, _ outcome: Outcome, on conn: SQLiteConnection) throws(StoreError) {
        switch outcome {
        case .delivered, .refused:
            let bodyId = try conn.queryOne("SELECT bodyId FROM outliving_notice WHERE id = ?", [.integer(id)])?.optionalString(0)
            try conn.run("DELETE FROM outliving_notice WHERE id = ?", [.integer(id)])
            if let bodyId { try dropBodyIfUnused(bodyId, on: conn) }
        case .retry(let at, let error):
            try conn.run("""
                UPDATE outliving_notice SET attempts = attempts + 1, nextAttemptAt = ?, lastError = ? WHERE id = ?
                """, [.integer(at), .text(error), .integer(id)])
        }
    }

    /// Deletes every notice queued before `queuedBefore` (older than the age bound), and the
    /// bodies no notice names any more. Returns how many notices it deleted.
    @discardableResult
    public static func dropExpired(queuedBefore: Int64, on conn: SQLiteConnection) throws(StoreError) -> Int {
        let dropped = try conn.run("DELETE FROM outliving_notice WHERE queuedAt < ?", [.integer(queuedBefore)])
        if dropped > 0 {
            try conn.run("""
                DELETE FROM outliving_notice_body
                WHERE NOT EXISTS (SELECT 1 FROM outliving_notice n WHERE n.bodyId = outliving_notice_body.bodyId)
                """)
        }
        return dropped
    }

    private static func dropBodyIfUnused(_ bodyId: String, on conn: SQLiteConnection) throws(StoreError) {
        try conn.run("""
            DELETE FROM outliving_notice_body WHERE bodyId = ?1
              AND NOT EXISTS (SELECT 1 FROM outliving_notice WHERE bodyId = ?1)
            """, [.text(bodyId)])
    }
}
