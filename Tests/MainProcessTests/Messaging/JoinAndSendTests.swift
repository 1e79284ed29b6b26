import Foundation
import SharedStore
import Testing
import TestSupport

/// Invite, join and send between real devices (daemon + socket-activated sotto-notify each).
@Suite("Messaging: join and send", .serialized)
struct JoinAndSendTests {
    @Test("invite → join → membership; text both ways, a reply and a reaction, status delivered (each device sent a receipt)")
    func twoDevices() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])

        // The creator's invite row is stored and the joiner's conversation carries the name.
        #expect(try alice.query("SELECT count(*) FROM invite WHERE conversationId = ?", [.text(trip)])[0].int64(0) == 1)
        #expect(try bob.conversation(trip)?["name"] as? String == "Trip")
        #expect(try bob.conversation(trip)?["isCreator"] as? Bool == false)
        #expect(try alice.query("SELECT state FROM join_request WHERE conversationId = ?", [.text(trip)])
            .map { try $0.string(0) } == ["accepted"])

        _ = try alice.json(["send", trip, "train at 9?"])
        try bob.waitUntil("bob has alice's text") { hasText(bob, trip, "train at 9?") }
        _ = try bob.json(["send", trip, "yes, coffee"])
        try alice.waitUntil("alice has bob's text") { hasText(alice, trip, "yes, coffee") }
        try bob.waitUntil("bob's text sent") { deliveryStatus(bob, trip, "yes, coffee") == "delivered" }

        let coffee = try require(message(alice, trip, text: "yes, coffee")?["id"] as? String)
        _ = try alice.json(["send", trip, "perfect", "--reply-to", String(coffee.prefix(10))])
        try bob.waitUntil("bob has the reply") { message(bob, trip, text: "perfect")?["referenceId"] as? String == coffee }

        let question = try require(message(bob, trip, text: "train at 9?")?["id"] as? String)
        _ = try bob.json(["react", trip, question, "👍"])
        try alice.waitUntil("alice has the reaction") { message(alice, trip, text: "reacted 👍")?["referenceId"] as? String == question }
        _ = try bob.json(["react", trip, question, "👍", "--remove"])
        try alice.waitUntil("alice has the removal") { hasText(alice, trip, "removed 👍") }
        try alice.waitUntil("alice's messages all sent") {
            alice.messages(trip).filter { $0["outgoing"] as? Bool == true }.allSatisfy { $0["deliveryStatus"] as? String == "delivered" }
        }
    }

    @Test("three devices: every join sends the whole member list, and a message reaches everyone")
    func threeDevices() throws {
        let net = try Network(["alice", "bob", "carol"])
        let (alice, bob, carol) = (net["alice"], net["bob"], net["carol"])
        let trip = try net.conversation(creator: alice, joiners: [bob, carol])
        // bob learned of carol through the second membership message.
        try bob.waitUntil("bob lists 3 members") { try bob.conversation(trip)?["members"] as? Int == 3 }
        #expect(try carol.conversation(trip)?["members"] as? Int == 3)

        _ = try carol.json(["send", trip, "hello from carol"])
        try alice.waitUntil("alice has carol's text") { hasText(alice, trip, "hello from carol") }
        try bob.waitUntil("bob has carol's text") { hasText(bob, trip, "hello from carol") }
        try carol.waitUntil("carol's text sent to both") { deliveryStatus(carol, trip, "hello from carol") == "delivered" }
        #expect(try carol.query("SELECT count(*) FROM outbox o JOIN message m ON m.id = o.messageId WHERE m.fallback IS NULL AND m.contentType = 'xmtp.org/text:1.0' AND o.state = 'delivered'")[0].int64(0) == 2)
    }

    @Test("a member's push socket down: the message stays pending, then arrives once it is back")
    func endpointDown() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])

        bob.stopPushSocket()
        _ = try alice.json(["send", trip, "are you there?"])
        try alice.waitUntil("a failed attempt is recorded") {
            try alice.query("SELECT count(*) FROM outbox WHERE state = 'pending' AND attempts >= 1")[0].int64(0) == 1
        }
        #expect(deliveryStatus(alice, trip, "are you there?") == "pending")
        #expect(!hasText(bob, trip, "are you there?"))

        try bob.startPushSocket()
        try bob.waitUntil("bob has it after the retry", timeoutMs: 30_000) { hasText(bob, trip, "are you there?") }
        try alice.waitUntil("alice shows it sent") { deliveryStatus(alice, trip, "are you there?") == "delivered" }
    }

    @Test("the sender's daemon killed mid-send: the outbox delivers after the restart")
    func daemonRestartedMidSend() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])

        bob.stopPushSocket()
        _ = try alice.json(["send", trip, "survives a crash"])
        try alice.waitUntil("a failed attempt is recorded") {
            try alice.query("SELECT count(*) FROM outbox WHERE state = 'pending' AND attempts >= 1")[0].int64(0) == 1
        }
        alice.stopDaemon(signal: SIGKILL)
        try bob.startPushSocket()
        #expect(!hasText(bob, trip, "survives a crash"))
        try alice.startDaemon()
        try bob.waitUntil("bob has it after alice's restart", timeoutMs: 30_000) { hasText(bob, trip, "survives a crash") }
        try alice.waitUntil("alice shows it sent") { deliveryStatus(alice, trip, "survives a crash") == "delivered" }
    }
}
