import DaemonLogging
import DaemonStore
import SharedStore
import SottoCrypto
import SottoWire

/// `sotto rename` (docs/protocol/roster.md §10, docs/adr/0049): a member changes its own
/// profile name in a conversation. Only the creator issues roster changes, so a member's
/// device signs a `sotto/rename:1.0` with the new name and seals it to the creator alone; the
/// creator's worker records it (the signer is who is renamed: the content names no member), and
/// this actor on the creator's device re-issues it as a `renamed` roster delta to everyone.
/// The creator renaming itself issues the delta at once. A member's renames are applied at
/// most once per `renameEveryMs`; later ones wait, and the latest name wins.
///
/// ```swift
/// let renamed = try await requests.rename(in: "3fa2", to: "Bea")
/// renamed.members   // 1: sent to the creator; or, on the creator's device, every other member
/// ```
extension RosterRequests {
    /// A member's renames are re-issued at most this often: each is a delta to every member
    /// (~1 KB × 999 at 1,000 members), so a loop of renames costs the creator ≤ ~17 KB/s.
    static let renameEveryMs: Int64 = 60_000

    public struct Renamed: Sendable {
        public let conversationId: String
        public let profileName: String
        /// Whom the change was sealed to: the creator (1), or every other member.
        public let members: Int
    }

    /// This device's own profile name in the conversation `reference` (an id or unique prefix).
    public func rename(in reference: String, to name: String) async throws -> Renamed {
        guard !name.isEmpty, MessageContent.isProfileName(name) else {
            throw ConversationService.Failure.invalid(
                "a profile name is 1 to \(ContentLimits.maxProfileNameBytes) bytes without control characters")
        }
        let conversation: DBConversation
        switch try database.read({ conn in try ConversationLookupRepository.resolve(reference: reference, on: conn) }) {
        case .one(let found): conversation = found
        case .none: throw ConversationService.Failure.notFound(reference)
        case .ambiguous: throw ConversationService.Failure.ambiguous(reference)
        }
        guard conversation.state == .active else {
            throw ConversationService.Failure.refused("conversation \(conversation.id.prefix(12)) is not joined yet")
        }
        if let expiresAt = conversation.expiresAt, expiresAt <= WallClock.nowMs() {
            throw ConversationService.Failure.refused("conversation \(conversation.id.prefix(12)) has exploded")
        }
        if conversation.creatorInboxId != conversation.inboxId {
            try await queueToCreator(of: conversation, contentType: ContentType.rename,
                                     content: JSONWriter.bytes(["profileName": .string(name)]))
            DaemonLog.info("asked the creator of conversation \(conversation.id.prefix(8)) to rename this member")
            return Renamed(conversationId: conversation.id, profileName: name, members: 1)
        }
        let identity = try await identities.identity(of: conversation.inboxId)
        let members = try await database.write { conn -> Int in
            try RosterSettlementWriter.setProfileName(name, inboxId: identity.inboxId, conversationId: conversation.id, on: conn)
            try RosterAnnouncer.queue(.renamed([RosterDelta.Rename(inboxId: identity.inboxId, profileName: name)]),
                                      of: conversation, from: identity, on: conn)
            return try MemberRepository.members(of: conversation.id, on: conn).count - 1
        }
        await outbox.kick()
        return Renamed(conversationId: conversation.id, profileName: name, members: members)
    }

    /// The creator's side: each conversation's owed renames, one delta per conversation.
    func applyRenames() async -> Int {
        let ids = (try? database.read { conn in
            try RosterRequestRepository.conversationsOwingRenames(appliedBy: WallClock.nowMs() - Self.renameEveryMs, on: conn)
        }) ?? []
        var applied = 0
        for id in ids {
            do {
                applied += try await applyRenames(conversationId: id)
            } catch {
                DaemonLog.warning("renames in conversation \(id.prefix(8)) are not applied yet: \(error)")
            }
        }
        return applied
    }

    /// One transaction: the owed renames re-read under the write lock, the names set here,
    /// one delta renaming them all, the renames settled.
    private func applyRenames(conversationId: String) async throws -> Int {
        guard let conversation = try database.read({ conn in try ConversationRepository.find(id: conversationId, on: conn) }),
              conversation.creatorInboxId == conversation.inboxId else { return 0 }
        let identity = try await identities.identity(of: conversation.inboxId)
        let applied = try await database.write { conn -> Int in
            let now = WallClock.nowMs()
            let owed = try RosterRequestRepository.owedRenames(conversationId: conversationId,
                                                               appliedBy: now - Self.renameEveryMs, on: conn)
            let names = try MemberNamesRepository.profileNames(of: conversationId, on: conn)
            let members = Set(try MemberRepository.members(of: conversationId, on: conn).map(\.inboxId))
            var renames: [RosterDelta.Rename] = []
            for rename in owed {
                let changes = members.contains(rename.inboxId) && names[rename.inboxId] != rename.profileName
                if changes {
                    try RosterSettlementWriter.setProfileName(rename.profileName, inboxId: rename.inboxId,
                                                              conversationId: conversationId, on: conn)
                    renames.append(RosterDelta.Rename(inboxId: rename.inboxId, profileName: rename.profileName))
                }
                try RosterSettlementWriter.settle(rename, applied: changes, now: now, on: conn)
            }
            if !renames.isEmpty {
                try RosterAnnouncer.queue(.renamed(renames), of: conversation, from: identity, on: conn)
            }
            return renames.count
        }
        if applied > 0 { DaemonLog.info("\(applied) member(s) of conversation \(conversationId.prefix(8)) renamed") }
        return applied
    }
}
