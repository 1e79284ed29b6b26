import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Issue #21: what Sotto *sends*, taken off the wire and opened by a reader that is not Sotto.
/// Four real daemons on direct endpoints; alice's and carol's endpoints are wiretapped
/// (`PushTap`: each push kept as it arrived, then handed to the real worker). Through a
/// conversation's whole life (joins, a text, a reply, a reaction, delivery receipts, a rename,
/// a leave, a removal, an immediate explode) every captured push is opened by
/// `../shared/tools/open_push.py` with the tapped device's key and its signature verified.
@Suite("Wire: pushes captured on their way to two members, opened by the independent reader", .serialized)
struct CapturedPushReaderTests {
    static let expectedKinds = [ContentType.joinRequest, ContentType.text, ContentType.reply, ContentType.reaction,
                                ContentType.receipt, ContentType.rename, ContentType.leave, ContentType.remove,
                                ContentType.explodeSettings]

    @Test("every push that reached alice or carol opens and verifies: join request, roster, text, reply, reaction, receipt, rename, leave, remove, explode")
    func everyCapturedPushOpens() async throws {
        try await onOwnThread { try self.steps() }
    }

    private func steps() throws {
        let net = try Network(["alice", "bob", "carol", "dave"])
        let alice = net["alice"], bob = net["bob"], carol = net["carol"], dave = net["dave"]
        let aliceTap = try PushTap.install(on: alice, in: net.tmp.path)
        let carolTap = try PushTap.install(on: carol, in: net.tmp.path)
        defer { aliceTap.stop(); carolTap.stop() }

        let trip = try net.conversation(creator: alice, joiners: [carol, bob, dave])
        // The tapped devices' keys, read before the explode wipes them.
        let key = { (device: Device) throws -> Identity in
            let inbox = try require(try device.conversation(trip)?["inboxId"] as? String, "inboxId")
            return try Keystore(directory: device.group.keystorePath, environment: [:]).identity(inboxId: inbox)
        }
        let aliceKey = try key(alice), carolKey = try key(carol)
        let topic = { (device: Device) throws -> String in
            try device.query("SELECT topic FROM conversation WHERE id = ?", [.text(trip)])[0].string(0)
        }
        let aliceTopic = try topic(alice), carolTopic = try topic(carol)
        let members = { (device: Device) in try device.conversation(trip)?["members"] as? Int }
        let bobInbox = try require(try bob.conversation(trip)?["inboxId"] as? String, "bob's inboxId")

        let hello = try require(try alice.json(["send", trip, "hello from alice"])["messageId"] as? String, "messageId")
        try bob.waitUntil("bob has alice's text") { hasText(bob, trip, "hello from alice") }
        _ = try bob.json(["send", trip, "a reply from bob", "--reply-to", hello])
        _ = try bob.json(["react", trip, hello, "👍"])
        _ = try bob.json(["rename", trip, "Robert"])
        try carol.waitUntil("carol has bob's reply") { hasText(carol, trip, "a reply from bob") }
        let daveInbox = try require(try dave.conversation(trip)?["inboxId"] as? String, "dave's inboxId")
        _ = try dave.json(["leave", trip])
        try carol.waitUntil("carol sees dave leave") { try members(carol) == 3 }
        _ = try alice.json(["remove", trip, bobInbox])
        try carol.waitUntil("carol sees bob removed") { try members(carol) == 2 }
        try alice.waitUntil("carol's receipt for alice's text applied") {
            try alice.query("SELECT state FROM outbox WHERE messageId = ? AND memberInboxId = ?",
                            [.text(hello), .text(carolKey.inboxId)]).first?.string(0) == "delivered"
        }
        _ = try alice.json(["explode", trip])
        try carol.waitUntil("carol deleted the exploded conversation") { try isGone(carol, trip) }

        // A departed member's late push (a receipt on its way as it left) is refused as unknown_sender.
        let departed = [bobInbox, daveInbox]
        var kinds: [String: Int] = [:]
        for (tap, recipient, topic, name) in [(aliceTap, aliceKey, aliceTopic, "alice"), (carolTap, carolKey, carolTopic, "carol")] {
            #expect(!tap.captured.isEmpty, "nothing reached \(name)")
            for push in tap.captured {
                do {
                    // A push may leave its topic out (PROTOCOL §1): the recipient knows it.
                    let opened = try IndependentReader.open(push.payload, recipient: recipient, topic: topic)
                    // A receipt still on its way when alice exploded is refused as the conversation's end.
                    let refusedLate = push.ack.contains("\"unknown_sender\"") && departed.contains(opened.senderInboxId)
                        || push.ack.contains("\"conversation_expired\"") && opened.contentType == ContentType.receipt
                    #expect(push.ack.contains("\"ok\":true") || refusedLate,
                            "\(name)'s worker answered \(push.ack.prefix(120)) to a \(opened.contentType)")
                    #expect(opened.conversationId == trip || opened.contentType == ContentType.joinRequest,
                            "\(opened.contentType) names another conversation")
                    #expect(opened.senderInboxId != recipient.inboxId, "\(name) got its own \(opened.contentType)")
                    if opened.contentType == ContentType.text {
                        #expect(String(decoding: opened.content, as: UTF8.self) == "hello from alice")
                    }
                    kinds[opened.contentType, default: 0] += 1
                } catch {
                    Issue.record("a push to \(name) does not open: \(error)")
                }
            }
        }
        print("INDEPENDENT READER captured: \(kinds.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        for kind in Self.expectedKinds { #expect(kinds[kind] != nil, "no \(kind) was captured and opened") }
        #expect(kinds[ContentType.rosterDelta] != nil || kinds[ContentType.membership] != nil, "no roster was captured")
    }
}
