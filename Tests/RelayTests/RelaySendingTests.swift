import Foundation
import RelayTransport
import SharedStore
import Testing
import TestSupport

/// The sending half (docs/adr/0028) with real processes: two devices, each a real daemon with
/// `SOTTO_RELAY`, a real sotto-relayd and the real worker, and one nats-server -js. Each test
/// skips (prints why) when nats-server is not installed.
@Suite("Relay sending", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelaySendingTests {
    @Test("alice and bob on a relay: invite, join and messages both ways arrive; read shows relayed")
    func bothWays() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        let trip = try peers.conversation(creator: "alice", joiner: "bob")

        let hello = try peers.send("alice", trip, "hello bob")
        try peers["bob"].waitUntil("bob has alice's message", timeoutMs: 30_000) {
            peers.receivedTexts("bob", trip) == ["hello bob"]
        }
        let answer = try peers.send("bob", trip, "hi alice")
        try peers["alice"].waitUntil("alice has bob's answer", timeoutMs: 30_000) {
            peers.receivedTexts("alice", trip) == ["hi alice"]
        }

        for (name, id) in [("alice", hello), ("bob", answer)] {
            let shown = try #require(peers.message(name, trip, id: id))
            #expect(shown["deliveryStatus"] as? String == "relayed")
            let deliveries = try #require(shown["deliveries"] as? [[String: Any]])
            #expect(deliveries.count == 1)
            #expect(deliveries.first?["state"] as? String == "relayed")
            #expect(try peers.outboxStates(name, messageId: id).map(\.state) == ["relayed"])
        }
        // The relay gave both pushes to their devices: nothing stays on it.
        try peers["alice"].waitUntil("the relay is empty") { try peers.relay().storedCount() == 0 }
        // The human form shows the state too.
        let read = try peers["alice"].cli(["read", trip])
        #expect(read.status == 0)
        #expect(read.stdout.contains("hello bob (relayed)"))
    }
}
