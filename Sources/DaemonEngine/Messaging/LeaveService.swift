import DaemonStore
import SottoCrypto
import SottoWire

/// `sotto leave` (issue #17 item 4, docs/protocol/leave-remove.md): a member who is not the
/// creator tells every member it leaves (`sotto/leave:1.0`, sealed to each) and deletes
/// everything of the conversation here, as an explode does locally (ADR 0016). The leave
/// message, its pushes and the conversation's `expiresAt` (backed by the leave, so a restart's
/// sweep finishes a leave a crash cut off) commit in one transaction; the deletion then moves
/// the pushes not delivered yet into the notices that outlive their conversation
/// (docs/adr/0034), which the outbox delivers for up to 30 days.
///
/// ```swift
/// let left = try await leave.leave("3fa2")   // left.members: how many members are told
/// ```
public actor LeaveService {
    public struct Result: Sendable {
        public let conversationId: String
        /// Members the leave is sealed to (now, or later from the notice queue).
        public let members: Int
    }

    static let content = JSONWriter.bytes(.object(JSONObject()))

    let service: ConversationService
    let explodeWorker: ExplodeWorker

    init(service: ConversationService, explodeWorker: ExplodeWorker) {
        self.service = service
        self.explodeWorker = explodeWorker
    }

    public func leave(_ reference: String) async throws -> Result {
        let conversation = try await service.conversation(reference)
        guard conversation.creatorInboxId != conversation.inboxId else {
            throw ConversationService.Failure.refused(
                "the conversation's creator cannot leave it; explode it instead (sotto explode \(conversation.id.prefix(8)))")
        }
        await explodeWorker.hold(conversation.inboxId)
        do {
            let conversationId = conversation.id
            let sent = try await service.sendContent(
                conversation, contentType: ContentType.leave, content: Self.content,
                fallback: "left the conversation", referenceId: nil
            ) { conn in
                _ = try InvitationWriter.setExpiresAt(conversationId: conversationId, expiresAtMs: WallClock.nowMs(), on: conn)
            }
            CrashPoint.reach("leave.committed")
            try await explodeWorker.deleteInbox(conversation.inboxId)
            await explodeWorker.release(conversation.inboxId)
            return Result(conversationId: conversation.id, members: sent.recipients)
        } catch {
            await explodeWorker.release(conversation.inboxId)
            throw error
        }
    }
}
