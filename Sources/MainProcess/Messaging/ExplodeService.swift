import Foundation
import SharedStore

/// `sotto explode` (ADR 004): only the creator may explode a conversation. The
/// `convos.org/explode_settings:1.0` message goes to every member first; for an immediate
/// explosion the daemon waits (bounded) until the outbox has delivered it or given up, then
/// deletes the conversation here. A scheduled explosion stores the future time; every
/// device's expired-conversations worker deletes it then.
///
/// ```swift
/// let result = try await explode.explode("3fa2", at: nil)                      // now
/// let later = try await explode.explode("3fa2", at: WallClock.nowMs() + 3_600_000)
/// ```
actor ExplodeService {
    struct Result: Sendable {
        let conversationId: String
        let expiresAtMs: Int64
        let deleted: Bool
        let delivered: Int
        let undelivered: Int
    }

    let database: DaemonDatabase
    let service: ConversationService
    let outbox: OutboxSender
    let expired: ExpiredConversationsWorker
    /// How long an immediate explosion waits for its pushes.
    let deliveryBudgetMs: Int64

    init(database: DaemonDatabase, service: ConversationService, outbox: OutboxSender,
         expired: ExpiredConversationsWorker, deliveryBudgetMs: Int64 = 10_000) {
        self.database = database
        self.service = service
        self.outbox = outbox
        self.expired = expired
        self.deliveryBudgetMs = deliveryBudgetMs
    }

    func explode(_ reference: String, at requestedMs: Int64?) async throws -> Result {
        let conversation = try await service.conversation(reference)
        guard conversation.creatorInboxId == conversation.inboxId else {
            throw ConversationService.Failure.refused("only the conversation's creator can explode it")
        }
        let now = WallClock.nowMs()
        if let requestedMs, requestedMs < now - 1_000 {
            throw ConversationService.Failure.invalid("the explosion time is in the past")
        }
        // What goes on the wire is ISO 8601 to the millisecond: use the value every receiver parses.
        let wire = ISO8601.string(fromMillis: requestedMs ?? now)
        let expiresAtMs = ISO8601.millis(from: wire) ?? (requestedMs ?? now)
        let content = JSONWriter.bytes(["expiresAt": .string(wire)])
        let sent = try await service.sendContent(conversation, contentType: ContentType.explodeSettings, content: content,
                                                 fallback: "Conversation expires at \(wire)", referenceId: nil)
        let immediate = requestedMs == nil || expiresAtMs <= WallClock.nowMs()
        var (delivered, undelivered) = (0, sent.recipients)
        if immediate {
            (delivered, undelivered) = await waitForDelivery(messageId: sent.messageId)
        }
        try await database.write { conn in
            _ = try InvitationWriter.setExpiresAt(conversationId: conversation.id, expiresAtMs: expiresAtMs, on: conn)
        }
        if immediate {
            try await expired.deleteInbox(conversation.inboxId)
        } else {
            await expired.signal()
        }
        return Result(conversationId: conversation.id, expiresAtMs: expiresAtMs, deleted: immediate,
                      delivered: delivered, undelivered: undelivered)
    }

    /// Waits until no push of the message is pending, or the budget is spent.
    private func waitForDelivery(messageId: String) async -> (delivered: Int, undelivered: Int) {
        let deadline = WallClock.nowMs() + deliveryBudgetMs
        while true {
            let counts = (try? database.read { conn -> (Int, Int) in
                let row = try conn.queryOne("""
                    SELECT coalesce(sum(state = 'sent'), 0), coalesce(sum(state = 'pending'), 0),
                           coalesce(sum(state = 'failed'), 0)
                    FROM outbox WHERE messageId = ?
                    """, [.text(messageId)])
                let sent = Int(try row?.int64(0) ?? 0)
                let pending = Int(try row?.int64(1) ?? 0)
                let failed = Int(try row?.int64(2) ?? 0)
                return pending == 0 ? (sent, failed) : (-1, pending + failed)
            }) ?? (0, 0)
            if counts.0 >= 0 || WallClock.nowMs() >= deadline {
                return counts.0 >= 0 ? (counts.0, counts.1) : (0, counts.1)
            }
            await outbox.kick()
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
