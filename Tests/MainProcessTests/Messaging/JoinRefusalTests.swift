import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import Testing
import TestSupport

/// A join the creator refuses after opening it is answered (docs/protocol/join-refusal.md):
/// two real daemons, the creator's real worker and daemon decide, the refusal travels through
/// the creator's outbox to the joiner's real push socket and worker, and the joiner's daemon
/// deletes the pending join and its identity as an abandoned join, keeping `refused: <reason>`
/// in `sotto ls` until `sotto dismiss`.
@Suite("Messaging: a refused join is answered", .serialized)
struct JoinRefusalTests {
    @Test("a revoked invite: the joiner shows refused: revoked, its pending identity is wiped; the push opens with open_push.py")
    func revoked() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let tap = try PushTap.install(on: bob, in: net.tmp.path)
        defer { tap.stop() }
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
        let code = try require(try alice.json(["invite", trip, "--expires", "1h"])["code"] as? String)
        _ = try alice.json(["revoke", trip, code])

        _ = try bob.json(["join", code, "--profile-name", "Bob"])
        let pending = try bob.pendingJoin(trip)
        #expect(FileManager.default.fileExists(atPath: pending.identityFile))

        try bob.waitUntil("bob is told", timeoutMs: 30_000) { try bob.refusedJoin(trip) != nil }
        try bob.waitUntil("bob's pending join and its identity are deleted", timeoutMs: 30_000) { try bob.isDeleted(pending) }
        let refused = try require(try bob.refusedJoin(trip))
        #expect(refused["reason"] as? String == "revoked")
        #expect(refused["reasonText"] as? String == "the invite was revoked")
        let asked = try require((refused["askedAtMs"] as? NSNumber)?.int64Value)
        let told = try require((refused["refusedAtMs"] as? NSNumber)?.int64Value)
        print("join refusal: bob asked at \(asked), was told \(told - asked) ms later")
        #expect(try bob.conversation(trip) == nil)
        let ls = try bob.cli(["ls"])
        #expect(ls.stdout.contains("\(trip.prefix(12))  [refused: revoked]  the invite was revoked"), "\(ls.stdout)")
        #expect(bob.daemonLog.contains("the creator refused a join; deleting it and its identity"))
        #expect(alice.daemonLog.contains("rejected: invite revoked"))
        #expect(try alice.conversation(trip)?["members"] as? Int == 1)

        // What alice sent, as it arrived, opened by a second implementation of the envelope.
        let aliceInbox = try require(try alice.conversation(trip)?["inboxId"] as? String)
        let opened = try tap.captured.compactMap { push -> IndependentReader.Opened? in
            let one = try? IndependentReader.open(push.payload, recipient: pending.identity, topic: DBConversation.topic(for: trip))
            return one?.contentType == ContentType.joinRefused ? one : nil
        }
        #expect(opened.count == 1)
        let refusal = try require(opened.first)
        #expect(refusal.senderInboxId == aliceInbox && refusal.conversationId == trip)
        #expect(try JoinRefusal.decode(refusal.content) == JoinRefusal(joinRequestId: pending.joinRequestId, reason: .revoked))

        // Dismissed by a prefix: gone from `sotto ls`; a second time there is nothing to dismiss.
        let dismissed = try bob.cli(["dismiss", String(trip.prefix(8))])
        #expect(dismissed.status == 0, "\(dismissed.stderr)")
        #expect(try bob.refusedJoins().isEmpty)
        #expect(try bob.cli(["dismiss", String(trip.prefix(8))]).status != 0)
        let garbage = try bob.cli(["dismiss", "zz;DROP"])
        #expect(garbage.status != 0 && garbage.stderr.contains("is not a conversation id"), "\(garbage.stderr)")
    }

    @Test("a single-use invite carol used: bob is refused used_up; carol stays a member")
    func usedUp() throws {
        let net = try Network(["alice", "bob", "carol"])
        let (alice, bob, carol) = (net["alice"], net["bob"], net["carol"])
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
        let code = try require(try alice.json(["invite", trip, "--single-use", "--expires", "1h"])["code"] as? String)
        _ = try carol.json(["join", code, "--profile-name", "Carol"])
        try carol.waitUntil("carol is in", timeoutMs: 30_000) { try carol.conversation(trip)?["state"] as? String == "active" }

        _ = try bob.json(["join", code, "--profile-name", "Bob"])
        let pending = try bob.pendingJoin(trip)
        try bob.waitUntil("bob is refused and his pending join deleted", timeoutMs: 30_000) {
            try bob.refusedJoin(trip)?["reason"] as? String == "used_up" && bob.isDeleted(pending)
        }
        #expect(try alice.conversation(trip)?["members"] as? Int == 2)
        #expect(try carol.conversation(trip)?["state"] as? String == "active")
        #expect(try carol.refusedJoins().isEmpty)
    }

    @Test("an invite that expired before the request reached the creator: refused expired")
    func expired() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
        let short = try alice.json(["invite", trip, "--expires", "3s"])
        let code = try require(short["code"] as? String)
        let expiresAt = try require((short["expiresAtMs"] as? NSNumber)?.int64Value)
        alice.stopPushSocket()  // bob's request waits in his outbox until after the expiry

        _ = try bob.json(["join", code, "--profile-name", "Bob"])
        let pending = try bob.pendingJoin(trip)
        try bob.waitUntil("the invite's expiry passed") { WallClock.nowMs() > expiresAt }
        try alice.startPushSocket()
        try bob.waitUntil("bob is refused and his pending join deleted", timeoutMs: 60_000) {
            try bob.refusedJoin(trip)?["reason"] as? String == "expired" && bob.isDeleted(pending)
        }
        #expect(try alice.conversation(trip)?["members"] as? Int == 1)
    }

    @Test("a conversation of 1,000 members: the next real joiner is refused full")
    func full() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
        let code = try require(try alice.json(["invite", trip, "--expires", "1h"])["code"] as? String)
        // 999 members beside alice, written as a worker writes (the daemon counts the rows).
        let conn = try SQLiteConnection.open(path: alice.group.databasePath, profile: .worker)
        try conn.immediateTransaction { () throws(StoreError) in
            for _ in 0..<999 {
                let member = Identity.generate()
                try conn.run("""
                    INSERT INTO member(conversationId, inboxId, publicKey, endpoint, clientId, role)
                    VALUES (?, ?, ?, 'unix:/nonexistent/member.sock', ?, 'member')
                    """, [.text(trip), .text(member.inboxId), .text(member.publicKey.hex), .text(member.clientId)])
            }
        }
        #expect(try alice.query("SELECT count(*) FROM member WHERE conversationId = ?", [.text(trip)])[0].int64(0) == 1_000)

        _ = try bob.json(["join", code, "--profile-name", "Bob"])
        let pending = try bob.pendingJoin(trip)
        try bob.waitUntil("bob is refused and his pending join deleted", timeoutMs: 30_000) {
            try bob.refusedJoin(trip)?["reason"] as? String == "full" && bob.isDeleted(pending)
        }
        #expect(alice.daemonLog.contains("rejected: the conversation has 1000 members"))
        #expect(try alice.query("SELECT count(*) FROM member WHERE conversationId = ?", [.text(trip)])[0].int64(0) == 1_000)
    }
}
