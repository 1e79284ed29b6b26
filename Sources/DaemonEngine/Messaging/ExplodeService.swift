import DaemonStore
import Foundation
import SharedStore
import SottoCrypto
import SottoWire

/// `sotto explode` (the source app's "Conversation Explode Feature"; docs/adr/0016): only the creator may explode a conversation. The
/// `convos.org/explode_settings:1.0` message, its pushes and the conversation's new
/// `expiresAt` are stored in one transaction, so once `explode` has committed a crash cannot
/// undo half of it: a restart delivers the pushes and deletes the conversation. For an
/// immediate explosion the daemon waits (bounded) until the outbox has delivered the pushes
/// or given up, then deletes the conversation here; the explode worker holds
/// the deletion back for that long too. A scheduled explosion waits the same way for the
/// report; every device's explode worker deletes it at the time.
///
/// ```swift
/// let result = try await explode.explode("3fa2", at: nil)                      // now
/// let later = try await explode.explode("3fa2", at: WallClock.nowMs() + 3_600_000)
/// _ = try await explode.explode("3fa2", at: nil, cancel: true)               // called off
/// ```
///
/// Run again on a scheduled conversation it changes the schedule: each decision carries the
/// creator's next sequence number, and every device follows the highest one it holds
/// (docs/protocol/explode-schedule.md, docs/adr/0040).
public actor ExplodeService {
    public struct Result: Sendable {
        public let conversationId: String
        /// Nil when this explode cancelled the scheduled one.
        public let expiresAtMs: Int64?
        /// The creator's sequence number of this decision (docs/protocol/explode-schedule.md).
        public let sequence: Int64
        public let deleted: Bool
        /// Members whose device acked the explode message within the wait.
        public let delivered: Int
        /// Members whose push failed, or was still pending when the wait ended.
        public let undelivered: Int
    }

    /// The latest explosion time accepted: 3650 days ahead (ADR 0017).
    static let maximumDelayMs = DurationParser.maximumMs

    let database: DaemonDatabase
    let service: ConversationService
    let outbox: OutboxSender
    let explodeWorker: ExplodeWorker
    /// How long an explosion waits for its pushes.
    let deliveryBudgetMs: Int64

    init(database: DaemonDatabase, service: ConversationService, outbox: OutboxSender,
         explodeWorker: ExplodeWorker, deliveryBudgetMs: Int64 = 10_000) {
        self.database = database
        self.service = service
        self.outbox = outbox
        self.explodeWorker = explodeWorker
        self.deliveryBudgetMs = deliveryBudgetMs
    }

    public func explode(_ reference: String, at requestedMs: Int64?, cancel: Bool = false) async throws -> Result {
        let conversation = try await service.conversation(reference)
        guard conversation.creatorInboxId == conversation.inboxId else {
            throw ConversationService.Failure.refused("only the conversation's creator can explode it")
        }
        let now = WallClock.nowMs()
        if cancel {
            guard requestedMs == nil else { throw ConversationService.Failure.invalid("give a time or cancel, not both") }
            guard conversation.expiresAt != nil else {
                throw ConversationService.Failure.refused("no explosion is scheduled for this conversation")
            }
        }
        // docs/protocol/explode-schedule.md §5: a time more than a second ago is a mistake, not
        // "now"; up to a second ago (a clock read on the way) it is now.
        if let requestedMs, requestedMs < now - 1_000 {
            throw ConversationService.Failure.invalid("the explosion time is in the past")
        }
        if let requestedMs, requestedMs - now > Self.maximumDelayMs {
            throw ConversationService.Failure.invalid(
                "the explosion time must be at most \(DurationParser.maximumText) from now")
        }
        // What goes on the wire is ISO 8601 to the millisecond: use the value every receiver parses.
        let wanted = cancel ? nil : (requestedMs ?? now)
        let expiresAtMs = wanted.map { ISO8601.millis(from: ISO8601.string(fromMillis: $0)) ?? $0 }
        // The sweep would delete the conversation (and the outbox rows counted below) as soon as
        // the pushes are out; this explode deletes it itself after counting.
        await explodeWorker.hold(conversation.inboxId)
        do {
            let result = try await explodeNumbered(conversation, expiresAtMs: expiresAtMs)
            await explodeWorker.release(conversation.inboxId)
            return result
        } catch {
            await explodeWorker.release(conversation.inboxId)
            throw error
        }
    }

    /// The explosion is committed and its pushes went out, but deleting the conversation on
    /// this device failed (a full disk, an I/O error): said as such, since the members have
    /// it, and the sweep deletes it here once it can.
    public struct DeletionPending: Error, CustomStringConvertible {
        let delivered: Int
        public let cause: any Error

        public var description: String {
            "the explosion went out (\(delivered) member device(s) reached); deleting the conversation on this device "
                + "failed (\(cause)) and is retried"
        }
    }

    /// Another explode of the conversation stored its decision with this sequence first.
    private struct SequenceTaken: Error {}

    /// Explodes of one conversation take turns from numbering to commit (the actor lets
    /// another call in at every await): calls at once get distinct sequences, the later one
    /// in force. The delivery wait after the commit is not part of the turn.
    private let numbering = KeyedTurns()

    /// Numbers the decision one more than the highest stored, and stores it, in this
    /// conversation's turn; the storing transaction checks that no other decision has that
    /// number (a safety net: the turn already keeps them apart).
    private func explodeNumbered(_ conversation: DBConversation, expiresAtMs: Int64?) async throws -> Result {
        await numbering.take(conversation.id)
        let stored: (schedule: ExplodeSchedule, messageId: String)
        do {
            let sequence = try database.read { conn in
                try ExplodeRepository.nextScheduleSequence(conversationId: conversation.id,
                                                           creatorInboxId: conversation.creatorInboxId, on: conn)
            }
            let schedule = ExplodeSchedule(sequence: sequence, expiresAtMs: expiresAtMs)
            stored = (schedule, try await store(schedule, in: conversation))
            await numbering.end(conversation.id)
        } catch is SequenceTaken {
            await numbering.end(conversation.id)
            throw ConversationService.Failure.refused("another explode of this conversation took its number; try again")
        } catch {
            await numbering.end(conversation.id)
            throw error
        }
        return try await report(stored.schedule, messageId: stored.messageId, in: conversation)
    }

    /// Stores the decision, its pushes and the conversation's new `expiresAt` in one transaction.
    private func store(_ schedule: ExplodeSchedule, in conversation: DBConversation) async throws -> String {
        let conversationId = conversation.id, creator = conversation.creatorInboxId
        let sent = try await service.sendContent(
            conversation, contentType: ContentType.explodeSettings, content: schedule.content,
            fallback: schedule.fallback, referenceId: nil
        ) { conn in
            // This decision is stored by now (same transaction): the one in force includes it,
            // and it must be the only one with its number.
            let numbered = try ExplodeScheduleRepository.decisions(conversationId: conversationId, creatorInboxId: creator, on: conn)
            guard numbered.filter({ $0.sequence >= schedule.sequence }).count == 1 else { throw SequenceTaken() }
            _ = try ExplodeScheduleWriter.apply(conversationId: conversationId, creatorInboxId: creator,
                                                messageId: nil, now: WallClock.nowMs(), on: conn)
        }
        return sent.messageId
    }

    /// After the commit: waits (bounded) for the pushes, then deletes the conversation here
    /// when its time has come, or wakes the sweep for the new time.
    private func report(_ schedule: ExplodeSchedule, messageId: String, in conversation: DBConversation) async throws -> Result {
        CrashPoint.reach("explode.committed")
        let (delivered, undelivered) = await waitForDelivery(messageId: messageId)
        CrashPoint.reach("explode.delivered")
        let immediate = schedule.expiresAtMs.map { $0 <= WallClock.nowMs() } ?? false
        if immediate {
            do {
                try await explodeWorker.deleteInbox(conversation.inboxId, purgeRelayFiles: true)
            } catch {
                await explodeWorker.kick()  // the sweep deletes it again as soon as it can
                throw DeletionPending(delivered: delivered, cause: error)
            }
        } else {
            await explodeWorker.kick()
        }
        return Result(conversationId: conversation.id, expiresAtMs: schedule.expiresAtMs, sequence: schedule.sequence,
                      deleted: immediate, delivered: delivered, undelivered: undelivered)
    }

    /// Waits until no push of the message is pending, or the budget is spent; counts what was
    /// acked by a device or stored by a relay (delivered: a relay hands it over when the member
    /// is back, docs/adr/0028) and what failed or is still pending (undelivered).
    private func waitForDelivery(messageId: String) async -> (delivered: Int, undelivered: Int) {
        let deadline = WallClock.nowMs() + deliveryBudgetMs
        while true {
            let counts = try? database.read { conn in try OutboxRepository.deliveryCounts(messageId: messageId, on: conn) }
            if let counts, counts.pending == 0 || WallClock.nowMs() >= deadline {
                return (counts.sent + counts.relayed, counts.pending + counts.failed)
            }
            if counts == nil, WallClock.nowMs() >= deadline { return (0, 0) }
            await outbox.kick()
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
