import DaemonCore
import Foundation
import DaemonStore
import SharedStore
import SottoCrypto
import SottoWire

/// Both ends of an invite (PROTOCOL §6): the creator makes a signed code and keeps the
/// invite row (its inbox stays protected while the invite is pending); a joiner checks the
/// code, takes a fresh identity for the conversation, stores it as `pendingJoin` with the
/// creator as a member (so the creator's pushes verify), and queues a `join_request`
/// sealed to the creator's key and clientId on the conversation's topic.
///
/// ```swift
/// let code = try await invites.createInvite(for: "3fa2", expiresInMs: 3_600_000)   // creator
/// let conversation = try await invites.join(code: code, profileName: "Bob")          // joiner
/// ```
public actor InviteService {
    let database: DaemonDatabase
    let unusedInboxes: UnusedInboxCache
    /// Resolves conversation references.
    let service: ConversationService
    let inboxLRU: InboxLRU
    let identities: InboxIdentities
    let outbox: OutboxSender
    /// Gives up a join never accepted (``PendingJoinLimit``): told of each new one.
    let explodeWorker: ExplodeWorker
    let endpoint: String

    init(database: DaemonDatabase, unusedInboxes: UnusedInboxCache, service: ConversationService,
         inboxLRU: InboxLRU, identities: InboxIdentities, outbox: OutboxSender,
         explodeWorker: ExplodeWorker, endpoint: String) {
        self.database = database
        self.unusedInboxes = unusedInboxes
        self.service = service
        self.inboxLRU = inboxLRU
        self.identities = identities
        self.outbox = outbox
        self.explodeWorker = explodeWorker
        self.endpoint = endpoint
    }

    // MARK: - Creator

    /// A signed invite code for a conversation this device created.
    public func createInvite(for reference: String, expiresInMs: Int64?, singleUse: Bool = false) async throws
        -> (code: String, inviteId: String, expiresAtMs: Int64?) {
        if let expiresInMs, expiresInMs <= 0 { throw ConversationService.Failure.invalid("--expires must be positive") }
        let conversation = try await service.conversation(reference)
        guard conversation.creatorInboxId == conversation.inboxId else {
            throw ConversationService.Failure.refused("only the conversation's creator can invite")
        }
        let now = WallClock.nowMs()
        if let expiresAt = conversation.expiresAt, expiresAt <= now {
            throw ConversationService.Failure.refused("the conversation has exploded")
        }
        let identity = try await identities.identity(of: conversation.inboxId)
        let me = try database.read { conn in
            try MemberRepository.member(conversationId: conversation.id, inboxId: conversation.inboxId, on: conn)
        }
        let expiresAtMs = expiresInMs.map { now + $0 }
        let invite: InviteCode
        do {
            invite = try InviteCode.make(conversationId: conversation.id, name: conversation.name ?? "",
                                         creatorEndpoint: me?.endpoint ?? endpoint, creatorClientId: identity.clientId,
                                         expiresAtMs: expiresAtMs, signer: identity.privateKey)
        } catch {
            throw ConversationService.Failure.invalid(error.description)
        }
        let row = DBInvite(id: invite.inviteId, conversationId: conversation.id, secret: invite.secret,
                           createdAt: now, expiresAt: expiresAtMs, singleUse: singleUse)
        try await database.write { conn in try InvitationWriter.insert(row, on: conn) }
        try await inboxLRU.setProtected(conversation.inboxId, reason: .pendingInvite, true)
        return (invite.code, invite.inviteId, expiresAtMs)
    }

    /// Revokes an invite of a conversation this device created: a join request decided after
    /// this is refused, whenever it was sent. `invite` is the invite's id, a unique prefix of
    /// it, or the invite code itself. Returns the id and whether it was revoked just now
    /// (false: it already was).
    public func revoke(in reference: String, invite: String) async throws -> (inviteId: String, revokedNow: Bool) {
        let conversation = try await service.conversation(reference)
        guard conversation.creatorInboxId == conversation.inboxId else {
            throw ConversationService.Failure.refused("only the conversation's creator can revoke its invites")
        }
        let wanted = try Self.inviteIdOrPrefix(invite)
        let invites = try database.read { conn in try InvitationWriter.invites(conversationId: conversation.id, on: conn) }
        let matches = invites.filter { $0.id.hasPrefix(wanted) }
        guard let target = matches.first else {
            throw ConversationService.Failure.missing("no invite of conversation \(conversation.id.prefix(12)) matches '\(wanted.prefix(40))'")
        }
        guard matches.count == 1 else {
            throw ConversationService.Failure.invalid("'\(wanted)' matches more than one invite; give more of the id")
        }
        let revokedNow = try await database.write { conn in
            try InvitationWriter.revoke(inviteId: target.id, now: WallClock.nowMs(), on: conn)
        }
        await service.joinRequests.refreshProtection(inboxId: conversation.inboxId)
        return (target.id, revokedNow)
    }

    /// An invite id (or prefix) as typed, or the id inside an invite code (`sotto1:…`, read
    /// without checking its expiry: an expired invite can still be revoked).
    static func inviteIdOrPrefix(_ text: String) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix(InviteCode.prefix) {
            do {
                return try InviteCode.parse(trimmed, nowMs: 0).inviteId
            } catch {
                throw ConversationService.Failure.invalid("not an invite code: \(error.description)")
            }
        }
        guard !trimmed.isEmpty, trimmed.utf8.count <= 128, trimmed.utf8.allSatisfy(Hex.isDigit),
              trimmed == trimmed.lowercased() else {
            throw ConversationService.Failure.invalid("'\(trimmed.prefix(40))' is neither an invite id nor an invite code")
        }
        return trimmed
    }

    // MARK: - Joiner

    /// Verifies the code (signature, expiry), stores the conversation as `pendingJoin` under a
    /// fresh identity and queues the join request. Returns the new conversation.
    public func join(code: String, profileName: String) async throws -> DBConversation {
        guard MessageContent.isProfileName(profileName) else {
            throw ConversationService.Failure.invalid(
                "profile name must be at most \(ContentLimits.maxProfileNameBytes) bytes without control characters")
        }
        let invite: InviteCode
        do {
            invite = try InviteCode.parse(code.trimmingCharacters(in: .whitespacesAndNewlines), nowMs: WallClock.nowMs())
        } catch {
            throw ConversationService.Failure.invalid(error.description)
        }
        let creatorKey = try PublicKey(hex: invite.creatorPublicKey)
        let known = try database.read { conn in try ConversationRepository.find(id: invite.conversationId, on: conn) }
        guard known == nil else {
            throw ConversationService.Failure.refused("this device already has conversation \(invite.conversationId)")
        }

        let identity = try await unusedInboxes.consume()  // already stored in the keystore
        let now = WallClock.nowMs()
        let creator = MemberEntry(inboxId: invite.creatorInboxId, publicKey: invite.creatorPublicKey,
                                  endpoint: invite.creatorEndpoint, clientId: invite.creatorClientId, profileName: nil)
        let me = MemberEntry(inboxId: identity.inboxId, publicKey: identity.publicKey.hex, endpoint: endpoint,
                             clientId: identity.clientId, profileName: profileName)
        let request = JSONWriter.bytes([
            "inviteId": .string(invite.inviteId), "secret": .string(invite.secret),
            "profileName": .string(profileName), "endpoint": .string(endpoint), "clientId": .string(identity.clientId),
        ])
        let signed = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: invite.conversationId,
                                        sentAtMs: now, contentType: ContentType.joinRequest, content: request,
                                        fallback: nil, signer: identity.privateKey)
        let payload = MessageComposer.sealOne(signed, to: creatorKey, clientId: invite.creatorClientId, topic: invite.topic,
                                              endpoint: invite.creatorEndpoint)
        let outgoing = OutgoingMessage(id: signed.id, conversationId: invite.conversationId,
                                       senderInboxId: identity.inboxId, sentAtMs: now,
                                       contentType: ContentType.joinRequest, content: request,
                                       fallback: nil, referenceId: nil)
        let conversationId = invite.conversationId
        let name = invite.name.isEmpty ? nil : invite.name
        try await database.write { conn in
            // A new try supersedes a refusal `sotto ls` still shows for this conversation.
            try JoinRefusalDismissal.dismiss(conversationId: conversationId, on: conn)
            try InboxWriter.save(inboxId: identity.inboxId, clientId: identity.clientId, now: now, on: conn)
            try InboxWriter.createConversation(
                NewConversation(id: conversationId, inboxId: identity.inboxId, name: name,
                                creatorInboxId: invite.creatorInboxId, state: .pendingJoin, createdAt: now,
                                members: [creator, me]),
                on: conn)
            try OutgoingMessageWriter.insert(outgoing, pushes: [OutboxEntry(memberInboxId: invite.creatorInboxId,
                                                                            endpoint: invite.creatorEndpoint,
                                                                            clientId: invite.creatorClientId, bodyId: nil,
                                                                            payload: payload)],
                                             now: now, on: conn)
        }
        _ = try await inboxLRU.wake(identity.inboxId, reason: .userInteraction)
        await outbox.kick()
        await explodeWorker.kick()  // its next sweep sets its timer to this join's limit
        return try await service.conversation(conversationId)
    }
}
