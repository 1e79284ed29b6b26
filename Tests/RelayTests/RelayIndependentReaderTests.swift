import Foundation
import RelayTransport
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Issue #21: what the daemons publish to a relay, as the relay stores it, opened by a reader
/// that is not Sotto (`../shared/tools/open_push.py`) with the recipient's own key. The
/// recipients' relayds are stopped, so every frame stays in their mailboxes to be read by
/// sequence (nothing is consumed): a join request in the creator's, then the roster change, a
/// text, a reply, a reaction and a scheduled explode in a member's.
@Suite("Relay: what the daemons publish, opened by the independent reader", .serialized,
       .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayIndependentReaderTests {
    @Test("every frame on the relay is one padded size and opens with open_push.py: join request, roster, text, reply, reaction, explode")
    func everyFrameOpens() async throws {
        try await onOwnThread { try self.everyFrameOpensSteps() }
    }

    private func everyFrameOpensSteps() throws {
        guard FileManager.default.fileExists(atPath: IndependentReader.toolPath) else {
            Issue.record("\(IndependentReader.toolPath) is missing")
            return
        }
        guard let peers = try RelayPeers.make(["alice", "bob", "carol"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let alice = peers["alice"], bob = peers["bob"], carol = peers["carol"]
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let aliceInbox = try OfflineMemberRig.inbox(of: alice, conversationId: trip)
            let bobInbox = try OfflineMemberRig.inbox(of: bob, conversationId: trip)
            let aliceKey = try Keystore(directory: alice.group.keystorePath, environment: [:]).identity(inboxId: aliceInbox.inboxId)
            let bobKey = try Keystore(directory: bob.group.keystorePath, environment: [:]).identity(inboxId: bobInbox.inboxId)
            peers.stopRelayd("alice")
            peers.stopRelayd("bob")

            /// Every frame in `mailbox`, each checked for the one padded size, opened with `key`.
            func opened(_ mailbox: Mailbox, _ key: Identity, topic: String) throws -> [IndependentReader.Opened] {
                try peers.relay().storedMessages(mailbox).map { frame in
                    #expect(frame.count == RelayPadding.frameBytes, "a frame of \(frame.count) bytes")
                    return try IndependentReader.open(try RelayPadding.unpad(frame), recipient: key, topic: topic)
                }
            }

            // carol's join request waits in alice's mailbox.
            let code = try #require(try alice.json(["invite", trip, "--expires", "1h"])["code"] as? String)
            _ = try carol.json(["join", code, "--profile-name", "carol"])
            try alice.waitUntil("carol's join request is on the relay", timeoutMs: 30_000) {
                try peers.relay().storedCount(aliceInbox.mailbox) >= 1
            }
            let requests = try opened(aliceInbox.mailbox, aliceKey, topic: aliceInbox.topic)
            #expect(requests.map(\.contentType) == [ContentType.joinRequest])

            // alice takes it (her relayd back), tells bob, and writes to him.
            try peers.startRelayd("alice")
            try alice.waitUntil("alice lists carol", timeoutMs: 60_000) { try alice.conversation(trip)?["members"] as? Int == 3 }
            let hello = try peers.send("alice", trip, "hello bob, from the relay")
            _ = try alice.json(["send", trip, "and a reply", "--reply-to", hello])
            _ = try alice.json(["react", trip, hello, "🎉"])
            _ = try alice.json(["explode", trip, "--in", "1h"])
            try alice.waitUntil("alice's outbox is all on the relay", timeoutMs: 60_000) {
                try alice.query("SELECT count(*) FROM outbox WHERE state = 'pending'")[0].int64(0) == 0
            }

            let toBob = try opened(bobInbox.mailbox, bobKey, topic: bobInbox.topic)
            let kinds = Set(toBob.map(\.contentType))
            print("INDEPENDENT READER relay: \(toBob.count) frames to bob: \(toBob.map(\.contentType).joined(separator: " "))")
            for kind in [ContentType.text, ContentType.reply, ContentType.reaction, ContentType.explodeSettings] {
                #expect(kinds.contains(kind), "no \(kind) in bob's mailbox")
            }
            #expect(kinds.contains(ContentType.rosterDelta) || kinds.contains(ContentType.membership), "no roster change in bob's mailbox")
            #expect(toBob.allSatisfy { $0.senderInboxId == aliceInbox.inboxId && $0.conversationId == trip })
            #expect(toBob.contains { String(decoding: $0.content, as: UTF8.self) == "hello bob, from the relay" })
        }
    }
}
