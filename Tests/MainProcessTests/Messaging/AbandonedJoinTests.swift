import Foundation
import SharedStore
import Testing
import TestSupport

/// A join the creator never accepts (here the creator's device is gone) is given up after
/// `SOTTO_PENDING_JOIN_MAX_MS` (7 days by default, docs/adr/0033): the pending conversation
/// and its identity are deleted as an explode deletes them; the unused inbox and the
/// device's other conversations stay as they are.
@Suite("Abandoned joins", .serialized)
struct AbandonedJoinTests {
    @Test("a join never accepted is deleted with its identity after the limit; the unused inbox is not touched")
    func pendingJoinIsCleanedUp() throws {
        let tmp = try TemporaryDirectory(prefix: "sj")
        let alice = try Device.start("alice", in: tmp.path)
        let bob = try Device.start("bob", in: tmp.path, environment: ["SOTTO_PENDING_JOIN_MAX_MS": "2000"])
        defer { alice.stop(); bob.stop() }
        let trip = try #require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
        let code = try #require(try alice.json(["invite", trip, "--expires", "1h"])["code"] as? String)
        alice.stop()  // the creator is gone: the join request is never delivered, never accepted

        let mine = try #require(try bob.json(["new", "--name", "Mine"])["conversationId"] as? String)
        let joined = try bob.json(["join", code, "--profile-name", "Bob"])
        #expect(joined["state"] as? String == "pendingJoin")
        let inboxId = try #require(joined["inboxId"] as? String)
        let clientId = try #require(try bob.query("SELECT clientId FROM inbox WHERE inboxId = ?", [.text(inboxId)]).first?.string(0))
        let identityFile = bob.group.keystorePath + "/\(clientId).identity"
        let unusedFile = bob.group.keystorePath + "/unused.identity"
        #expect(FileManager.default.fileExists(atPath: identityFile))
        try bob.waitUntil("bob's unused inbox is prepared again") { try bob.json(["status"])["unusedInboxReady"] as? Bool == true }
        let unused = try #require(FileManager.default.contents(atPath: unusedFile))
        #expect(try bob.conversation(trip)?["state"] as? String == "pendingJoin")

        try bob.waitUntil("bob gives up the join", timeoutMs: 30_000) { try isGone(bob, trip) }
        // The rows go first (with a tombstone), then the keystore wipe, then the tombstone:
        // the conversation is gone a moment before the rest (seen under load in the full suite).
        try bob.waitUntil("the identity is wiped and its tombstone finished", timeoutMs: 30_000) {
            try !FileManager.default.fileExists(atPath: identityFile)
                && bob.query("SELECT count(*) FROM inbox_tombstone").first?.int64(0) == 0
        }
        #expect(try bob.query("SELECT count(*) FROM inbox WHERE inboxId = ?", [.text(inboxId)]).first?.int64(0) == 0)
        #expect(FileManager.default.contents(atPath: unusedFile) == unused, "the unused inbox is the same, untouched")
        #expect(try bob.conversation(mine)?["state"] as? String == "active", "an accepted conversation stays")
        #expect(bob.daemonLog.contains("was never accepted; deleting it and its identity"))
    }
}
