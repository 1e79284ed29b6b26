import Foundation
import SottoWire
import TestSupport
import Testing

/// Issue #22 §1 (docs/adr/0034): an explode reaches a member who was offline on a direct
/// `unix:` endpoint for longer than the explode's delivery wait, after the conversation is
/// gone on the sender, across a restart of the sender's daemon; the notice holds no
/// plaintext, and one older than the age bound is dropped.
@Suite("Messaging: explode reaches an offline member", .serialized)
struct ExplodeOfflineMemberTests {
    @Test("a member offline longer than the old 10 s wait deletes the conversation when it comes back; the sender keeps only the notice, then nothing")
    func offlineMemberIsToldLater() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let name = ExplodeTests.unique("secret plan")
        let trip = try net.conversation(creator: alice, joiners: [bob], name: name)
        let text = ExplodeTests.unique("meet at the docks")
        _ = try alice.json(["send", trip, text])
        try bob.waitUntil("bob has the text") { hasText(bob, trip, text) }
        let onAlice = try alice.conversationIds(trip)
        let onBob = try bob.conversationIds(trip)

        bob.stopPushSocket()
        bob.stopDaemon()
        let offlineSince = WallClock.nowMs()
        // The default delivery wait (10 s): the explode gives up on bob, then deletes.
        let exploded = try alice.cli(["explode", trip])
        #expect(exploded.status == 0, "\(exploded.stderr)")
        #expect(exploded.stdout.contains("told 0 member(s), 1 unreachable (told when they are back"), "\(exploded.stdout)")
        #expect(try alice.leftovers(of: onAlice) == [])
        #expect(try alice.outlivingNotices() == [1, 1])

        // A restart of the sender: the notice is in the database, not in the daemon's memory.
        alice.stopDaemon()
        try alice.startDaemon()
        #expect(try alice.outlivingNotices() == [1, 1])
        // The queue holds no plaintext and does not name the conversation.
        for needle in [text, name, trip] {
            #expect(try !alice.groupFilesContain(Array(needle.utf8)), "alice's files still hold \(needle)")
        }
        #expect(WallClock.nowMs() - offlineSince > 10_000, "bob was not offline longer than the old wait")
        #expect(try bob.query("SELECT count(*) FROM conversation WHERE id = ?", [.text(trip)])[0].int64(0) == 1)
        try bob.startDaemon()
        try bob.startPushSocket()
        try bob.waitUntil("bob deleted the conversation", timeoutMs: 90_000) { try bob.leftovers(of: onBob).isEmpty }
        try alice.waitUntil("alice's notice is gone", timeoutMs: 20_000) { try alice.outlivingNotices() == [0, 0] }
        #expect(try alice.query("SELECT count(*) FROM outliving_notice")[0].int64(0) == 0)
        for needle in [text, name] {
            #expect(try !bob.groupFilesContain(Array(needle.utf8)), "bob's files still hold \(needle)")
        }
    }

    @Test("a notice older than the age bound (SOTTO_NOTICE_MAX_AGE_MS) is dropped undelivered")
    func oldNoticeIsDropped() throws {
        let net = try Network(["alice", "bob"], environment: ["SOTTO_EXPLODE_DELIVERY_MS": "300",
                                                              "SOTTO_NOTICE_MAX_AGE_MS": "2000"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])
        bob.stopPushSocket()
        bob.stopDaemon()
        _ = try alice.json(["explode", trip])
        #expect(try alice.outlivingNotices() == [1, 1])
        try alice.waitUntil("the notice is dropped after 2 s", timeoutMs: 30_000) { try alice.outlivingNotices() == [0, 0] }
        #expect(alice.daemonLog.contains("dropped 1 undelivered notice(s) of deleted conversations"))
        // Nothing is left to tell bob: he keeps the conversation (as with a relay after its 30 days).
        try bob.startDaemon()
        #expect(try bob.conversation(trip) != nil)
        #expect(try alice.query("SELECT count(*) FROM outbox")[0].int64(0) == 0)
    }
}
