import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// The source app's "Conversation Explode Feature" between real devices: only the creator explodes; every device deletes the
/// conversation completely (no plaintext or key left in its files), now or at a set time;
/// late pushes are refused and never bring it back.
@Suite("Messaging: explode", .serialized)
struct ExplodeTests {
    static func unique(_ label: String) -> String { "\(label)-\(Hex.encode(SecureRandom.bytes(8)))" }

    @Test("a non-creator's explode is refused with exit 65 and deletes nothing")
    func nonCreatorRefused() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])
        let refused = try bob.cli(["explode", trip])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("only the conversation's creator"))
        #expect(try bob.conversation(trip) != nil)
        #expect(try alice.conversation(trip)?["expiresAtMs"] == nil)
    }

    @Test("explode now: every device deletes everything; no plaintext or identity remains; a late push is refused")
    func explodeNowLeavesNothing() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])
        let fromAlice = Self.unique("alice-plaintext")
        let fromBob = Self.unique("bob-plaintext")
        _ = try alice.json(["send", trip, fromAlice])
        _ = try bob.json(["send", trip, fromBob])
        try bob.waitUntil("bob has alice's text") { hasText(bob, trip, fromAlice) }
        try alice.waitUntil("alice has bob's text") { hasText(alice, trip, fromBob) }
        // The search below can fail: before the explosion the conversation id is on disk. The
        // text never is: it is sealed with the conversation's key (docs/adr/0052).
        #expect(try bob.groupFilesContain(Array(trip.utf8)))
        #expect(try !bob.groupFilesContain(Array(fromAlice.utf8)))

        // What a late push needs: alice's identity for this conversation and bob's member row.
        let aliceInbox = try require(try alice.conversation(trip)?["inboxId"] as? String)
        let bobInbox = try require(try bob.conversation(trip)?["inboxId"] as? String)
        let aliceIdentity = try Keystore(directory: alice.group.keystorePath, environment: [:]).identity(inboxId: aliceInbox)
        let bobClientId = try bob.query("SELECT clientId FROM inbox WHERE inboxId = ?", [.text(bobInbox)])[0].string(0)
        let bobKey = try bob.query("SELECT publicKey FROM member WHERE inboxId = ?", [.text(bobInbox)])[0].string(0)
        let privateKeyBytes = aliceIdentity.privateKey.exportBytes()

        let result = try alice.json(["explode", trip])
        #expect(result["deleted"] as? Bool == true)
        #expect((result["delivered"] as? NSNumber)?.intValue == 1)
        try bob.waitUntil("bob deleted it") { try isGone(bob, trip) }
        #expect(try isGone(alice, trip))

        for device in [alice, bob] {
            for text in [fromAlice, fromBob] {
                #expect(try !device.groupFilesContain(Array(text.utf8)), "\(device.name) still holds \(text)")
            }
            #expect(try !device.groupFilesContain(Array(trip.utf8)), "\(device.name) still holds the conversation id")
            #expect(try device.query("SELECT count(*) FROM inbox")[0].int64(0) == 0)
            #expect(try device.query("SELECT count(*) FROM message")[0].int64(0) == 0)
        }
        #expect(try !alice.groupFilesContain(privateKeyBytes))
        #expect(throws: KeystoreError.self) { try Keystore(directory: alice.group.keystorePath, environment: [:]).identity(inboxId: aliceInbox) }
        #expect(throws: KeystoreError.self) { try Keystore(directory: bob.group.keystorePath, environment: [:]).identity(inboxId: bobInbox) }

        // A late push from alice's (deleted) identity to bob's (deleted) one.
        let topic = DBConversation.topic(for: trip)
        let late = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: trip, sentAtMs: WallClock.nowMs(),
                                      contentType: ContentType.text, content: Array("too late".utf8), fallback: nil,
                                      signer: aliceIdentity.privateKey)
        let payload = PushPayload(clientId: bobClientId, topic: topic,
                                  envelope: Envelope.seal(late.encode(), recipient: try PublicKey(hex: bobKey),
                                                          clientId: bobClientId, topic: topic)).encode()
        let ack = try PushClient.send(payload, to: bob.runtime.pushSocketPath)
        #expect(ack.contains("unknown_client"))
        #expect(try isGone(bob, trip))
        #expect(try bob.query("SELECT count(*) FROM conversation")[0].int64(0) == 0)
    }

    @Test("explode in 5 s: every device stores the time, then deletes it then")
    func scheduledExplosion() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])
        let text = Self.unique("scheduled")
        _ = try alice.json(["send", trip, text])
        try bob.waitUntil("bob has the text") { hasText(bob, trip, text) }

        let result = try alice.json(["explode", trip, "--in", "5s"])
        #expect(result["deleted"] as? Bool == false)
        // Bob's device acked the explode message: it was delivered, not "undelivered 1".
        #expect((result["delivered"] as? NSNumber)?.intValue == 1, "\(result)")
        #expect((result["undelivered"] as? NSNumber)?.intValue == 0, "\(result)")
        let expiresAt = try require((result["expiresAtMs"] as? NSNumber)?.int64Value)
        // The ack came after bob's commit, so the time is stored; look while it is still
        // ahead (the explode now waits for its delivery, which a loaded machine makes slow).
        if WallClock.nowMs() < expiresAt - 1_000 {
            #expect((try bob.conversation(trip)?["expiresAtMs"] as? NSNumber)?.int64Value == expiresAt)
            #expect(try alice.conversation(trip) != nil)  // not before its time
        }
        try alice.waitUntil("alice deleted it", timeoutMs: 15_000) { try isGone(alice, trip) }
        try bob.waitUntil("bob deleted it", timeoutMs: 15_000) { try isGone(bob, trip) }
        #expect(WallClock.nowMs() >= expiresAt)
        #expect(try !bob.groupFilesContain(Array(text.utf8)))
    }

    @Test("explode while the other member's pushes are in flight: nothing comes back, nothing is left")
    func explodeDuringBurst() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])
        let prefix = Self.unique("burst")
        _ = try bob.json(["send", trip, prefix + "-first"])
        try alice.waitUntil("alice has the first") { hasText(alice, trip, prefix + "-first") }

        let sender = DispatchGroup()
        let sentCount = Counter()
        DispatchQueue.global().async(group: sender) {
            for index in 0..<30 {
                guard let result = try? bob.cli(["send", trip, "\(prefix)-\(index)"]), result.status == 0 else { return }
                sentCount.increment()
            }
        }
        try alice.waitUntil("bob is sending") { sentCount.value >= 2 }
        let result = try alice.json(["explode", trip])
        #expect(result["deleted"] as? Bool == true)
        sender.wait()
        try bob.waitUntil("bob deleted it") { try isGone(bob, trip) }
        try bob.waitUntil("bob's outbox is empty") { try bob.query("SELECT count(*) FROM outbox")[0].int64(0) == 0 }

        #expect(try isGone(alice, trip))
        #expect(try alice.query("SELECT count(*) FROM conversation")[0].int64(0) == 0)
        #expect(try !alice.groupFilesContain(Array(prefix.utf8)))
        #expect(try !bob.groupFilesContain(Array(prefix.utf8)))
    }
}

/// A thread-safe count for the burst sender.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}
