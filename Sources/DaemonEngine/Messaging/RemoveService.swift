import DaemonStore
import SharedStore
import SottoCrypto
import SottoWire

/// `sotto remove` (issue #17 item 4, docs/protocol/leave-remove.md §6): the creator removes a
/// member. One transaction stores the signed `sotto/remove:1.0`, its pushes (to every member,
/// the removed one included, so its device deletes the conversation) and drops the member's
/// rows here: whatever is composed after it is sealed to the others only, so nothing sent after
/// the removal is readable by the removed device. The outbox retries the pushes as any other.
///
/// ```swift
/// let removed = try await removals.remove("Bob", from: "3fa2")   // a profile name or an inbox id prefix
/// ```
public actor RemoveService {
    public struct Result: Sendable {
        public let conversationId: String
        public let inboxId: String
        /// Members the removal is sealed to, the removed one included.
        public let members: Int
    }

    let service: ConversationService
    let database: DaemonDatabase

    init(service: ConversationService, database: DaemonDatabase) {
        self.service = service
        self.database = database
    }

    public func remove(_ member: String, from reference: String) async throws -> Result {
        let conversation = try await service.conversation(reference)
        guard conversation.creatorInboxId == conversation.inboxId else {
            throw ConversationService.Failure.refused("only the conversation's creator can remove a member")
        }
        let inboxId = try resolve(member, in: conversation)
        guard inboxId != conversation.inboxId else {
            throw ConversationService.Failure.refused("the creator cannot remove itself; explode the conversation instead")
        }
        let conversationId = conversation.id
        let sent = try await service.sendContent(
            conversation, contentType: ContentType.remove, content: JSONWriter.bytes(["inboxId": .string(inboxId)]),
            fallback: "removed a member", referenceId: nil
        ) { conn in
            try MemberRemovalWriter.remove(inboxId: inboxId, conversationId: conversationId, on: conn)
        }
        return Result(conversationId: conversationId, inboxId: inboxId, members: sent.recipients)
    }

    /// A member by its exact profile name, or by its inbox id or a unique prefix of it.
    private func resolve(_ member: String, in conversation: DBConversation) throws -> String {
        let (members, names) = try database.read { conn in
            (try MemberRepository.members(of: conversation.id, on: conn),
             try MemberNamesRepository.profileNames(of: conversation.id, on: conn))
        }
        let byName = members.filter { names[$0.inboxId] == member }
        let byId = member.utf8.allSatisfy(Hex.isDigit) ? members.filter { $0.inboxId.hasPrefix(member.lowercased()) } : []
        let matches = byName.isEmpty ? byId : byName
        guard !member.isEmpty, let first = matches.first else {
            throw ConversationService.Failure.missing("no member of conversation \(conversation.id.prefix(12)) is '\(member.prefix(40))'")
        }
        guard matches.count == 1 else {
            throw ConversationService.Failure.invalid("'\(member)' names more than one member; give more of the inbox id")
        }
        return first.inboxId
    }
}
