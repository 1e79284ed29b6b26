import Foundation
import RelayTransport
import SharedStore
import SottoCrypto
import TestSupport
import Testing
import SottoWire

/// A roster gap through a relay (docs/protocol/roster.md §9), all real: nats-server -js, four
/// daemons with `SOTTO_RELAY`, each with its sotto-relayd and worker. The relay loses the delta
/// that added carol from bob's mailbox (purged, as its age limit would); the next delta leaves
/// bob a gap; his request and alice's full roster both travel through the relay.
@Suite("Relay roster gap", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayRosterGapTests {
    @Test("the relay drops a delta from bob's mailbox; bob asks alice through the relay and holds her roster")
    func gapHealsThroughTheRelay() throws {
        guard let peers = try RelayPeers.make(["alice", "bob", "carol", "dave"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let (alice, bob) = (peers["alice"], peers["bob"])
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let join = { (name: String, members: Int) throws in
                let code = try #require(try alice.json(["invite", trip, "--expires", "1h"])["code"] as? String, "code")
                _ = try peers[name].json(["join", code, "--profile-name", name])
                try peers[name].waitUntil("\(name) active", timeoutMs: 60_000) {
                    try peers[name].conversation(trip)?["state"] as? String == "active"
                }
                try alice.waitUntil("alice lists \(members)", timeoutMs: 60_000) { try alice.conversation(trip)?["members"] as? Int == members }
            }
            let version = { (device: Device) throws -> Int64 in
                try device.query("SELECT rosterVersion FROM conversation WHERE id = ?", [.text(trip)])[0].int64(0)
            }
            let bobInbox = try bob.conversationIds(trip).inboxId
            peers.stopRelayd("bob")
            try join("carol", 3)
            let delta = try #require(try alice.query("""
                SELECT o.messageId FROM outbox o JOIN message m ON m.id = o.messageId
                WHERE m.contentType = ? AND o.memberInboxId = ?
                """, [.text(ContentType.rosterDelta), .text(bobInbox)]).first?.string(0), "the delta to bob")
            try alice.waitUntil("the delta to bob waits in his mailbox", timeoutMs: 60_000) {
                try peers.outboxStates("alice", messageId: delta).map(\.state) == ["relayed"]
            }
            let relay = try peers.relay()
            try relay.purge(try peers.mailbox("bob", trip))
            try peers.startRelayd("bob")

            try join("dave", 4)
            let expected = try alice.query("SELECT inboxId FROM member WHERE conversationId = ? ORDER BY inboxId", [.text(trip)])
                .map { try $0.string(0) }
            try bob.waitUntil("bob holds alice's roster", timeoutMs: 60_000) {
                try version(bob) == 3
                    && bob.query("SELECT inboxId FROM member WHERE conversationId = ? ORDER BY inboxId", [.text(trip)])
                        .map { try $0.string(0) } == expected
            }
            #expect(try bob.query("SELECT version FROM roster_asked WHERE conversationId = ?", [.text(trip)]).map { try $0.int64(0) } == [1])
            #expect(try alice.query("SELECT owed FROM roster_request").map { try $0.int64(0) } == [0])
        }
    }
}
