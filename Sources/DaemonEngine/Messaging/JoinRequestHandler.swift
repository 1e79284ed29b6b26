import DaemonCore
import DaemonLogging
import DaemonStore
import Foundation
import SharedStore
import SottoCrypto
import SottoWire

/// The creator's decision on join requests the worker stored as pending (PROTOCOL §5): the
/// request must name an invite of this conversation in the `invite` table, carry its secret,
/// and have arrived before the invite expired. Accepted: the requester becomes a member, gets
/// the full roster, and every other member a `sotto/roster_delta:1.0` adding it
/// (`RosterAnnouncer`, docs/protocol/roster.md), stored with their pushes in the transaction that accepts (so a crash never leaves a member nobody was
/// told about). Otherwise the request is marked rejected and, when the reason is one a joiner
/// can be told (full, revoked, used up, expired, wrong secret, unknown invite), answered with a
/// signed `sotto/join_refused:1.0` to the requester's endpoint, within `JoinRefusalRateLimit`
/// (docs/protocol/join-refusal.md, `JoinRequestHandler+Refusal`). The inbox stays protected
/// while any request is pending.
///
/// ```swift
/// let decided = await handler.handlePending(conversationId: cid)   // on joinRequestReceived
/// await handler.handleAllPending()                                  // at launch
/// ```
public actor JoinRequestHandler {
    public enum Decision: Equatable, Sendable {
        case accepted(requesterInboxId: String)
        case rejected(requesterInboxId: String, reason: String)
    }

    /// A rejection and what the joiner is told (nil: nothing, e.g. a request from the creator itself).
    struct Rejection: Sendable {
        let request: DBJoinRequest
        let reason: String
        let refusal: JoinRefusal.Reason?
    }

    let database: DaemonDatabase
    /// Where a pending request or invite keeps the creator's inbox awake.
    let protection: any InboxProtection
    let identities: InboxIdentities
    let outbox: OutboxSender
    /// How many refusals may leave this device (docs/protocol/join-refusal.md §6).
    var refusalLimit = JoinRefusalRateLimit()
    /// Refusals queued since the daemon started.
    var refusalsSent = 0

    init(database: DaemonDatabase, protection: any InboxProtection, identities: InboxIdentities, outbox: OutboxSender) {
        self.database = database
        self.protection = protection
        self.identities = identities
        self.outbox = outbox
    }

    /// Every conversation with a pending request (launch).
    @discardableResult
    public func handleAllPending() async -> [Decision] {
        let ids = (try? database.read { conn in try ProtectionRepository.conversationsWithPendingJoinRequests(on: conn) }) ?? []
        var out: [Decision] = []
        for id in ids { out += await handlePending(conversationId: id) }
        return out
    }

    /// Decides each pending request of one conversation, oldest first; those that pass are
    /// accepted together, as one roster change (docs/adr/0042).
    @discardableResult
    func handlePending(conversationId: String) async -> [Decision] {
        guard let conversation = try? database.read({ conn in try ConversationRepository.find(id: conversationId, on: conn) })
        else { return [] }
        let pending = (try? database.read { conn in try JoinRequestRepository.pending(conversationId: conversationId, on: conn) }) ?? []
        if !pending.isEmpty {
            try? await protection.setProtected(conversation.inboxId, reason: .pendingJoinRequest, true)
        }
        var decisions: [Decision] = []
        var passing: [DBJoinRequest] = []
        for request in pending {
            do {
                if let rejected = try await rejectIfInvalid(request, in: conversation) {
                    decisions.append(rejected)
                } else {
                    passing.append(request)
                }
            } catch {
                DaemonLog.warning("join request \(request.id) not decided: \(type(of: error))")
            }
        }
        if !passing.isEmpty {
            do {
                decisions += try await acceptAndAnnounce(passing, in: conversation)
            } catch {
                DaemonLog.warning("\(passing.count) join request(s) not decided: \(type(of: error))")
            }
        }
        await refreshProtection(inboxId: conversation.inboxId)
        return decisions
    }

    /// Protection follows the database: pending requests, and invites not yet expired.
    func refreshProtection(inboxId: String) async {
        let now = WallClock.nowMs()
        guard let (requests, invites) = try? database.read({ conn -> (Bool, Bool) in
            (try ProtectionRepository.hasPendingJoinRequest(inboxId: inboxId, on: conn),
             try ProtectionRepository.hasLiveInvite(inboxId: inboxId, now: now, on: conn))
        }) else { return }
        try? await protection.setProtected(inboxId, reason: .pendingJoinRequest, requests)
        try? await protection.setProtected(inboxId, reason: .pendingInvite, invites)
    }

    // MARK: - Requests

    /// Rejects a request that names no valid invite (or is otherwise refused); nil when it passes.
    private func rejectIfInvalid(_ request: DBJoinRequest, in conversation: DBConversation) async throws -> Decision? {
        let found = try database.read { conn -> (String, JoinRefusal.Reason?)? in
            guard conversation.creatorInboxId == conversation.inboxId else { return ("not the creator of this conversation", nil) }
            if let expiresAt = conversation.expiresAt, expiresAt <= WallClock.nowMs() { return ("conversation exploded", nil) }
            guard request.requesterInboxId != conversation.inboxId else { return ("request from the creator itself", nil) }
            // The worker verified the signature; a row written any other way must still name a real key.
            guard (try? PublicKey(hex: request.requesterPublicKey))?.inboxId == request.requesterInboxId else {
                return ("requester key does not match its inbox", nil)
            }
            guard let invite = try InvitationWriter.invite(id: request.inviteId, on: conn),
                  invite.conversationId == conversation.id else { return ("unknown invite", .unknownInvite) }
            guard Self.constantTimeEqual(invite.secret, request.secret) else { return ("wrong secret", .badSecret) }
            guard invite.isValid(at: request.receivedAt) else { return ("invite expired", .expired) }
            // Revoked: refused whenever the request came, as long as it was not decided before.
            guard invite.revokedAt == nil else { return ("invite revoked", .revoked) }
            if invite.singleUse, try InvitationWriter.isUsed(inviteId: invite.id, on: conn) {
                return ("invite already used", .usedUp)
            }
            return nil
        }
        guard let (reason, refusal) = found else { return nil }
        let rejected = try await database.write { conn in try InvitationWriter.reject(request, on: conn) }
        DaemonLog.info("join request \(request.id) rejected: \(reason)")
        if rejected {
            await answer([Rejection(request: request, reason: reason, refusal: refusal)], in: conversation)
        }
        return .rejected(requesterInboxId: request.requesterInboxId, reason: reason)
    }

    /// One transaction: the requests accepted, the requesters members, and one roster change
    /// adding them all queued to every member but us (`RosterAnnouncer`). A request is
    /// rejected instead when its invite was revoked or used up meanwhile, or when the
    /// conversation already has `ContentLimits.maxMembers` members.
    private func acceptAndAnnounce(_ requests: [DBJoinRequest], in conversation: DBConversation) async throws -> [Decision] {
        let identity = try await identities.identity(of: conversation.inboxId)
        CrashPoint.reach("join.decided")
        let (decisions, rejections) = try await database.write { conn -> ([Decision], [Rejection]) in
            var decisions: [Decision] = []
            var rejections: [Rejection] = []
            var joined: [String] = []
            var members = try MemberRepository.members(of: conversation.id, on: conn).count
            for request in requests {
                // Checked again under the write lock: two requests decided at once cannot both use
                // a single-use invite, nor one slip past a revoke.
                var refusal: (String, JoinRefusal.Reason)?
                if let invite = try InvitationWriter.invite(id: request.inviteId, on: conn) {
                    let usedUp = invite.singleUse ? try InvitationWriter.isUsed(inviteId: invite.id, on: conn) : false
                    if invite.revokedAt != nil {
                        refusal = ("invite revoked", .revoked)
                    } else if usedUp {
                        refusal = ("invite already used", .usedUp)
                    }
                }
                if refusal == nil, members >= ContentLimits.maxMembers {
                    refusal = ("the conversation has \(ContentLimits.maxMembers) members", .full)
                }
                if let (reason, told) = refusal {
                    if try InvitationWriter.reject(request, on: conn) {
                        decisions.append(.rejected(requesterInboxId: request.requesterInboxId, reason: reason))
                        rejections.append(Rejection(request: request, reason: reason, refusal: told))
                    }
                    continue
                }
                guard try InvitationWriter.accept(request, on: conn) != nil else { continue }
                members += 1
                joined.append(request.requesterInboxId)
                decisions.append(.accepted(requesterInboxId: request.requesterInboxId))
            }
            if !joined.isEmpty {
                try RosterAnnouncer.queue(.joined(joined), of: conversation, from: identity, on: conn)
            }
            return (decisions, rejections)
        }
        CrashPoint.reach("join.committed")
        for decision in decisions {
            switch decision {
            case .accepted(let inboxId): DaemonLog.info("join request of \(inboxId.prefix(12)) accepted")
            case .rejected(let inboxId, let reason): DaemonLog.info("join request of \(inboxId.prefix(12)) rejected: \(reason)")
            }
        }
        if decisions.contains(where: { if case .accepted = $0 { true } else { false } }) { await outbox.kick() }
        if !rejections.isEmpty { await answer(rejections, in: conversation) }
        return decisions
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in x.indices { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}
