import Foundation
import SharedStore
import Testing
import TestSupport

/// Invites the creator limits (issue #17): `sotto invite --single-use` lets exactly one
/// device in, `sotto revoke` withdraws an invite; both decided by the creator's real daemon
/// on join requests that arrive through its real push socket and worker.
@Suite("Messaging: single-use and revoked invites", .serialized)
struct InviteLimitsTests {
    @Test("a single-use invite admits the first joiner and refuses the second; a real joiner with it is told used_up")
    func singleUse() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
        let code = try require(try alice.json(["invite", trip, "--single-use"])["code"] as? String)

        #expect(try InviteRejectionTests.decision(on: alice, try InviteRejectionTests.forgedJoinRequest(from: code)) == "accepted")
        #expect(try InviteRejectionTests.decision(on: alice, try InviteRejectionTests.forgedJoinRequest(from: code)) == "rejected")
        // The real device with the used code: its request reaches alice and is refused.
        let joined = try bob.json(["join", code, "--profile-name", "Bob"])
        #expect(joined["state"] as? String == "pendingJoin")
        try alice.waitUntil("bob's request decided") {
            try alice.query("SELECT count(*) FROM join_request WHERE state = 'rejected'")[0].int64(0) == 2
        }
        #expect(try alice.conversation(trip)?["members"] as? Int == 2)
        // Answered (docs/protocol/join-refusal.md): bob's pending join goes, `sotto ls` says why.
        try bob.waitUntil("bob is told", timeoutMs: 30_000) { try bob.refusedJoin(trip)?["reason"] as? String == "used_up" }

        // An invite without the flag still admits several.
        let open = try require(try alice.json(["invite", trip])["code"] as? String)
        #expect(try InviteRejectionTests.decision(on: alice, try InviteRejectionTests.forgedJoinRequest(from: open)) == "accepted")
        #expect(try InviteRejectionTests.decision(on: alice, try InviteRejectionTests.forgedJoinRequest(from: open)) == "accepted")
        #expect(try alice.conversation(trip)?["members"] as? Int == 4)
    }

    @Test("a revoked invite lets nobody in; revoke takes the code, the id or a prefix; a second revoke says so")
    func revoke() throws {
        let net = try Network(["alice"])
        let alice = net["alice"]
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
        let first = try alice.json(["invite", trip])
        let code = try require(first["code"] as? String)
        let inviteId = try require(first["inviteId"] as? String)

        let revoked = try alice.cli(["revoke", trip, code])
        #expect(revoked.status == 0, "\(revoked.stderr)")
        #expect(revoked.stdout.contains("revoked invite \(inviteId)"))
        #expect(try InviteRejectionTests.decision(on: alice, try InviteRejectionTests.forgedJoinRequest(from: code)) == "rejected")
        #expect(try alice.conversation(trip)?["members"] as? Int == 1)

        let again = try alice.cli(["revoke", trip, String(inviteId.prefix(6))])
        #expect(again.status == 0)
        #expect(again.stdout.contains("already revoked"))

        // Another invite of the same conversation is untouched, and revoking it by id works.
        let second = try alice.json(["invite", trip])
        let secondId = try require(second["inviteId"] as? String)
        #expect(try InviteRejectionTests.decision(on: alice, try InviteRejectionTests.forgedJoinRequest(
            from: try require(second["code"] as? String))) == "accepted")
        let byId = try alice.json(["revoke", trip, secondId])
        #expect(byId["inviteId"] as? String == secondId)
        #expect(byId["revokedNow"] as? Bool == true)
        #expect(try alice.conversation(trip)?["members"] as? Int == 2)  // members who joined stay
    }

    @Test("an invite revoked or used up no longer keeps its inbox awake, before and after a restart; a live one does")
    func spentInvitesProtectNothing() throws {
        let net = try Network(["alice"])
        let alice = net["alice"]
        let inbox = { (conversation: String) in
            try alice.query("SELECT inboxId FROM conversation WHERE id = ?", [.text(conversation)])[0].string(0)
        }
        let revoked = try require(try alice.json(["new", "--name", "Revoked"])["conversationId"] as? String)
        let code = try require(try alice.json(["invite", revoked, "--expires", "1h"])["code"] as? String)
        _ = try alice.json(["revoke", revoked, code])
        let usedUp = try require(try alice.json(["new", "--name", "Used"])["conversationId"] as? String)
        let single = try require(try alice.json(["invite", usedUp, "--single-use", "--expires", "1h"])["code"] as? String)
        #expect(try InviteRejectionTests.decision(on: alice, try InviteRejectionTests.forgedJoinRequest(from: single)) == "accepted")
        let live = try require(try alice.json(["new", "--name", "Live"])["conversationId"] as? String)
        _ = try alice.json(["invite", live, "--expires", "1h"])

        let protected = { Set(try alice.json(["status"])["protectedAwake"] as? [String] ?? []) }
        #expect(try protected() == [try inbox(live)])
        // The launch reads protection from the database: it must ask the same question.
        alice.stopDaemon()
        try alice.startDaemon()
        let (revokedInbox, usedUpInbox) = (try inbox(revoked), try inbox(usedUp))
        #expect(try protected() == [try inbox(live)], "after a restart: revoked \(revokedInbox.prefix(8)), used up \(usedUpInbox.prefix(8))")
    }

    @Test("revoke refuses a non-creator, an unknown invite and garbage, and changes nothing")
    func revokeRefusals() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])
        let code = try require(try alice.json(["invite", trip])["code"] as? String)
        let before = try alice.query("SELECT id, revokedAt IS NULL FROM invite ORDER BY id").map { "\(try $0.string(0)) \(try $0.int64(1))" }

        let notCreator = try bob.cli(["revoke", trip, code])
        #expect(notCreator.status != 0)
        #expect(notCreator.stderr.contains("only the conversation's creator"))

        for (garbage, says) in [("0000000000000000", "no invite"), ("ZZ", "neither an invite id"), ("sotto1:garbage", "not an invite code"),
                                ("sotto1:", "not an invite code"), (String(repeating: "a", count: 200), "neither an invite id"),
                                ("1; DROP TABLE invite", "neither an invite id")] {
            let result = try alice.cli(["revoke", trip, garbage])
            #expect(result.status != 0, "\(garbage)")
            #expect(result.stderr.contains(says), "\(garbage): \(result.stderr)")
        }
        let unknownConversation = try alice.cli(["revoke", "ffffffff", code])
        #expect(unknownConversation.status != 0)
        let after = try alice.query("SELECT id, revokedAt IS NULL FROM invite ORDER BY id").map { "\(try $0.string(0)) \(try $0.int64(1))" }
        #expect(after == before)
    }
}
