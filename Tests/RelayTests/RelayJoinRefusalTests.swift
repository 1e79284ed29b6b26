import Foundation
import SharedStore
import SottoCrypto
import TestSupport
import Testing

/// A refused join answered through a relay (docs/protocol/join-refusal.md §2), all real:
/// nats-server -js, two daemons with `SOTTO_RELAY`, each with its sotto-relayd and worker.
/// Bob's request reaches alice through her mailbox; her refusal goes to the endpoint bob's
/// request named (the relay) and reaches his pending identity's mailbox like any push.
@Suite("Relay join refusal", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayJoinRefusalTests {
    @Test("a revoked invite through a relay: bob shows refused: revoked and his pending identity is wiped")
    func refusedThroughTheRelay() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let (alice, bob) = (peers["alice"], peers["bob"])
            let trip = try #require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
            let code = try #require(try alice.json(["invite", trip, "--expires", "1h"])["code"] as? String)
            _ = try alice.json(["revoke", trip, code])

            _ = try bob.json(["join", code, "--profile-name", "Bob"])
            let pending = try bob.pendingJoin(trip)
            try bob.waitUntil("bob is refused and his pending join deleted", timeoutMs: 60_000) {
                try bob.refusedJoin(trip)?["reason"] as? String == "revoked" && bob.isDeleted(pending)
            }
            #expect(alice.daemonLog.contains("1 join refusal(s) queued"))
            try alice.waitUntil("alice's refusal left her queue for the relay", timeoutMs: 30_000) {
                try alice.query("SELECT count(*) FROM outliving_notice")[0].int64(0) == 0
            }
            #expect(try alice.conversation(trip)?["members"] as? Int == 1)
        }
    }
}
