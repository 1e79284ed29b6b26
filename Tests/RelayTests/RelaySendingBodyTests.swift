import Foundation
import RelayTransport
import SottoCrypto
import TestSupport
import Testing
import SottoWire

/// The daemon's outbox sending a message by reference to a member on a relay
/// (docs/protocol/bodies.md §6, docs/adr/0032): the body goes to the relay once, before the
/// push; a body the relay did not take leaves the push pending with the reason. All real:
/// daemons, sotto-relayd, workers, nats-server.
@Suite("Relay sending: bodies", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelaySendingBodyTests {
    /// 64 KiB: accents, quotes, control characters, line breaks.
    static let text = String(repeating: "é\u{1}  \"\\\n", count: ContentLimits.maxTextBytes / 8)

    /// The body id alice's pushes of `id` name, and how many bodies alice still stores.
    static func bodyId(_ peers: RelayPeers, _ id: String) throws -> String {
        let payload = try #require(try peers["alice"].query("SELECT payload FROM outbox WHERE messageId = ?", [.text(id)]).first?.blob(0))
        return try #require(try PushPayload.decode(payload).body?.id)
    }

    static func storedBodies(_ peers: RelayPeers) throws -> Int64 {
        try peers["alice"].query("SELECT count(*) FROM outbox_body")[0].int64(0)
    }

    @Test("bob offline: alice's 64 KiB text is relayed, its body on the relay once; bob gets it whole and once when he is back; alice keeps no body")
    func offlineMemberGetsTheBody() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            peers.stopRelayd("bob")
            peers["bob"].stopDaemon()

            let id = try peers.send("alice", trip, Self.text)
            try peers["alice"].waitUntil("relayed", timeoutMs: 30_000) {
                try peers.outboxStates("alice", messageId: id).map(\.state) == ["relayed"]
            }
            let bodyId = try Self.bodyId(peers, id)
            #expect(try peers.relay().hasBody(id: bodyId))
            #expect(try peers.relay().bodyStreamUsage().messages == 1)
            #expect(try Self.storedBodies(peers) == 0)

            try peers["bob"].startDaemon()
            try peers.startRelayd("bob")
            try peers["bob"].waitUntil("bob stored it", timeoutMs: 60_000) { try peers.storedTexts("bob", trip).count >= 1 }
            #expect(try peers.storedTexts("bob", trip) == [Self.text])
            #expect(peers.message("bob", trip, id: id)?["text"] as? String == Self.text)
        }
    }

    @Test("the relay down when alice sends a long text: pending with the relay's reason and the body kept; relayed, body and push, once it is back")
    func relayDownKeepsTheBody() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            peers.server.stop()

            let id = try peers.send("alice", trip, Self.text)
            try peers["alice"].waitUntil("a failed attempt is recorded", timeoutMs: 30_000) {
                try peers.outboxStates("alice", messageId: id).first?.lastError != nil
            }
            let pending = try peers.outboxStates("alice", messageId: id)
            #expect(pending.map(\.state) == ["pending"])
            #expect(pending.first?.lastError?.contains(peers.server.url) == true, "\(pending)")
            #expect(try Self.storedBodies(peers) == 1)

            try peers.server.restart()
            try peers["alice"].waitUntil("relayed", timeoutMs: 60_000) {
                try peers.outboxStates("alice", messageId: id).map(\.state) == ["relayed"]
            }
            #expect(try peers.relay().hasBody(id: try Self.bodyId(peers, id)))
            #expect(try Self.storedBodies(peers) == 0)
            try peers["bob"].waitUntil("bob stored it", timeoutMs: 60_000) { try peers.storedTexts("bob", trip).count >= 1 }
            #expect(try peers.storedTexts("bob", trip) == [Self.text])
        }
    }
    /// A relay that loses a body (its server replaced or wiped, which also forgets the
    /// 10-minute duplicate window; or the 30-day age limit, long past it) while a push that
    /// names it waits for a retry: the retry's pass publishes the body again. Remembered as
    /// published for the daemon's whole run, it would relay a push bob's relayd must refuse.
    @Test("the relay is wiped while a push waits for its retry, its body already published: the retry publishes the body again, and bob gets the text whole")
    func lostBodyIsPublishedAgain() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            // Without the mailbox stream the relay takes alice's body but not her push (and no
            // relayd is there to make the stream again).
            peers.stopRelayd("alice")
            peers.stopRelayd("bob")
            let deleted = try peers.relay().rawRequest("$JS.API.STREAM.DELETE.\(Mailbox.streamName)")
            #expect(deleted.reply?.contains("\"success\":true") == true, "\(deleted)")

            let id = try peers.send("alice", trip, Self.text)
            try peers["alice"].waitUntil("a failed attempt is recorded", timeoutMs: 30_000) {
                try peers.outboxStates("alice", messageId: id).first?.lastError != nil
            }
            #expect(try peers.outboxStates("alice", messageId: id).map(\.state) == ["pending"])
            let bodyId = try Self.bodyId(peers, id)
            #expect(try peers.relay().hasBody(id: bodyId), "the body went first")

            // The relay's server is replaced by an empty one on the same address; its operator
            // (here the test) makes the streams again.
            peers.server.stop()
            try FileManager.default.removeItem(atPath: peers.server.storeDirectory)
            try peers.server.restart()
            _ = try peers.relay().ensureStream()
            try peers.relay().ensureBodyStream()
            #expect(try !peers.relay().hasBody(id: bodyId))

            try peers["alice"].waitUntil("relayed", timeoutMs: 60_000) {
                try peers.outboxStates("alice", messageId: id).map(\.state) == ["relayed"]
            }
            #expect(try peers.relay().hasBody(id: bodyId), "the retry published the body again")
            try peers.startRelayd("bob")
            try peers["bob"].waitUntil("bob stored it", timeoutMs: 60_000) { try peers.storedTexts("bob", trip).count >= 1 }
            #expect(try peers.storedTexts("bob", trip) == [Self.text])
        }
    }
}
