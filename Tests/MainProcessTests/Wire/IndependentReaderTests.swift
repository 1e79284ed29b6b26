import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Issue #21: what Sotto *sends*, checked by a reader that is not Sotto. Three real daemons on
/// direct endpoints go through a conversation's life (join requests, rosters, a text, a reply,
/// a reaction, a scheduled explode); then every push any of them sent (each outbox row keeps
/// its payload) is opened by `../shared/tools/open_push.py` with its recipient's key, read
/// from the recipient's own keystore, and its signature verified.
@Suite("Wire: every push three daemons send, opened by the independent reader", .serialized)
struct IndependentReaderTests {
    @Test("open_push.py opens and verifies every push: join requests, rosters, text, reply, reaction, explode, each from its sender's inbox")
    func everyPushOpens() async throws {
        try await onOwnThread { try self.everyPushOpensSteps() }
    }

    private func everyPushOpensSteps() throws {
        guard FileManager.default.fileExists(atPath: IndependentReader.toolPath) else {
            Issue.record("\(IndependentReader.toolPath) is missing")
            return
        }
        let net = try Network(["alice", "bob", "carol"])
        let alice = net["alice"], bob = net["bob"], carol = net["carol"]
        let trip = try net.conversation(creator: alice, joiners: [bob, carol])
        let hello = try require(try alice.json(["send", trip, "hello from alice"])["messageId"] as? String, "messageId")
        try bob.waitUntil("bob has alice's text") { hasText(bob, trip, "hello from alice") }
        _ = try bob.json(["send", trip, "a reply from bob", "--reply-to", hello])
        try carol.waitUntil("carol has alice's text") { hasText(carol, trip, "hello from alice") }
        _ = try carol.json(["react", trip, hello, "👍"])
        _ = try alice.json(["explode", trip, "--in", "1h"])
        for device in [alice, bob, carol] {
            try device.waitUntil("\(device.name)'s outbox has nothing pending") {
                try device.query("SELECT count(*) FROM outbox WHERE state = 'pending'")[0].int64(0) == 0
            }
        }

        // Every identity of the three devices, by inbox id: the recipient of each push.
        var identities: [String: Identity] = [:]
        for device in [alice, bob, carol] {
            let keystore = try Keystore(directory: device.group.keystorePath, environment: [:])
            for row in try device.query("SELECT inboxId FROM conversation WHERE id = ?", [.text(trip)]) {
                let inboxId = try row.string(0)
                identities[inboxId] = try keystore.identity(inboxId: inboxId)
            }
        }
        #expect(identities.count == 3)

        var kinds: [String: Int] = [:]
        for device in [alice, bob, carol] {
            let ownInbox = try require(try device.conversation(trip)?["inboxId"] as? String, "inboxId")
            let rows = try device.query("SELECT messageId, memberInboxId, payload FROM outbox")
            #expect(!rows.isEmpty, "\(device.name) sent nothing")
            for row in rows {
                let (messageId, recipient, payload) = (try row.string(0), try row.string(1), try row.blob(2))
                let identity = try #require(identities[recipient], "\(device.name) sent to an inbox no device holds")
                do {
                    let opened = try IndependentReader.open(payload, recipient: identity)
                    #expect(opened.senderInboxId == ownInbox, "\(device.name)'s \(opened.contentType) is signed by another inbox")
                    #expect(opened.conversationId == trip || opened.contentType == ContentType.joinRequest)
                    #expect(opened.id == messageId)
                    kinds[opened.contentType, default: 0] += 1
                    if opened.contentType == ContentType.text {
                        #expect(String(decoding: opened.content, as: UTF8.self) == "hello from alice")
                    }
                } catch {
                    Issue.record("\(device.name) → \(recipient.prefix(8)): \(error)")
                }
            }
        }
        print("INDEPENDENT READER direct: \(kinds.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        for kind in [ContentType.joinRequest, ContentType.text, ContentType.reply, ContentType.reaction, ContentType.explodeSettings] {
            #expect(kinds[kind] != nil, "no \(kind) was opened")
        }
        #expect(kinds[ContentType.rosterDelta] != nil || kinds[ContentType.membership] != nil, "no roster was opened")
    }
}
