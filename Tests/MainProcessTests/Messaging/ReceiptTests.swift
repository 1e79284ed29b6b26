import Foundation
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Delivery receipts end to end (docs/protocol/receipts.md) on real daemons, each with the
/// real worker behind its push socket, talking over real sockets: `sent` becomes
/// `delivered` per member; a device with receipts off sends none; hostile receipts are
/// refused by the worker with nothing written.
@Suite("Delivery receipts", .serialized)
struct ReceiptTests {
    @Test("three daemons: every push ends delivered on the sender, in sotto read too; receipts get no receipts and never show")
    func deliveredEverywhere() throws {
        let net = try Network(["alice", "bob", "carol"])
        let alice = net["alice"], bob = net["bob"], carol = net["carol"]
        let trip = try net.conversation(creator: alice, joiners: [bob, carol])

        let hello = try require(try alice.json(["send", trip, "hello all"])["messageId"] as? String)
        try alice.waitUntil("both members' devices said delivered") {
            try outboxStates(alice, hello) == ["delivered", "delivered"]
        }
        let shown = try require(message(alice, trip, text: "hello all"))
        #expect(shown["deliveryStatus"] as? String == "delivered")
        #expect((shown["deliveries"] as? [[String: Any]])?.map { $0["state"] as? String } == ["delivered", "delivered"])
        #expect(try alice.cli(["read", trip]).stdout.contains("hello all (delivered)"))

        // The other way: bob's message is delivered to alice and carol alike.
        let reply = try require(try bob.json(["send", trip, "hi alice"])["messageId"] as? String)
        try bob.waitUntil("bob's message delivered to alice and carol") { try outboxStates(bob, reply) == ["delivered", "delivered"] }

        // What is owed is sealed and gone; nobody stored a receipt as a message or shows one;
        // and receipts get no receipts: once every queue is empty, none is owed anywhere.
        for device in [alice, bob, carol] {
            try device.waitUntil("\(device.name) owes nothing and has nothing queued") {
                try count(device, "receipt_due") == 0 && count(device, "outliving_notice") == 0
            }
            #expect(try device.query("SELECT count(*) FROM message WHERE contentType = ?", [.text(ContentType.receipt)])[0].int64(0) == 0)
            #expect(!device.messages(trip).contains { ($0["text"] as? String)?.contains("receipt") == true })
        }
    }

    @Test("receipts off on one device: it sends none and its pushes stay sent; on again, delivered; the setting is its own")
    func receiptsOff() throws {
        let net = try Network(["alice", "bob", "carol"])
        let alice = net["alice"], bob = net["bob"], carol = net["carol"]
        let trip = try net.conversation(creator: alice, joiners: [bob, carol])
        let (bobId, carolId) = (try inboxId(bob, trip), try inboxId(carol, trip))

        #expect(try carol.cli(["receipts", trip]).stdout.contains("receipts on"), "on by default")
        let off = try carol.json(["receipts", String(trip.prefix(8)), "--off"])
        #expect(off["conversationId"] as? String == trip && off["enabled"] as? Bool == false)
        #expect(try carol.cli(["receipts", trip]).stdout.contains("receipts off"))
        #expect(try bob.json(["receipts", trip])["enabled"] as? Bool == true, "the setting is carol's own")

        let quiet = try require(try alice.json(["send", trip, "quiet"])["messageId"] as? String)
        try alice.waitUntil("bob's receipt for 'quiet'") { try outboxState(alice, quiet, member: bobId) == "delivered" }
        try carol.waitUntil("carol stored 'quiet'") { hasText(carol, trip, "quiet") }
        // The worker decides in the commit that stores the message: nothing was ever owed.
        #expect(try count(carol, "receipt_due") == 0)
        #expect(try outboxState(alice, quiet, member: carolId) == "sent")
        #expect(deliveryStatus(alice, trip, "quiet") == "sent")
        #expect(try alice.cli(["read", trip]).stdout.contains("quiet (sent: 1 sent, 1 delivered)"))

        #expect(try carol.json(["receipts", trip, "--on"])["enabled"] as? Bool == true)
        let loud = try require(try alice.json(["send", trip, "loud"])["messageId"] as? String)
        try alice.waitUntil("carol's receipt for 'loud'") { try outboxState(alice, loud, member: carolId) == "delivered" }
        #expect(try carol.cli(["receipts", trip, "--on", "--off"]).status != 0)
    }

    @Test("hostile receipts at a real worker: an outsider, a member it was never sent to, an unknown id, garbage; each refused, nothing written")
    func hostileReceipts() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob])
        let hello = try require(try alice.json(["send", trip, "hello bob"])["messageId"] as? String)
        try alice.waitUntil("bob's receipt") { try outboxStates(alice, hello) == ["delivered"] }
        // Joined after 'hello bob' was sent: alice never sent it to mallory.
        let mallory = try RemoteMember.join(conversationId: trip, databasePath: alice.group.databasePath, name: "Mallory")
        let outsider = try RemoteMember.outsider(conversationId: trip, databasePath: alice.group.databasePath)
        func receipt(_ value: JSONValue) -> [UInt8] { JSONWriter.bytes(value) }
        let cases: [(String, RemoteMember, [UInt8], String)] = [
            ("an outsider", outsider, Receipt(delivered: [hello]).encode(), "unknown_sender"),
            ("a member never sent it", mallory, Receipt(delivered: [hello]).encode(), "unknown_message"),
            ("a member, failed for a message never sent to it", mallory,
             Receipt(delivered: [], failed: [.init(messageId: hello, error: "body_missing")]).encode(), "unknown_message"),
            ("an unknown id", mallory, Receipt(delivered: [Hex.encode(SecureRandom.bytes(16))]).encode(), "unknown_message"),
            ("not JSON", mallory, Array("\u{0}garbage".utf8), "malformed_message"),
            ("no entries", mallory, receipt(.object([:])), "malformed_message"),
            ("an id twice", mallory, receipt(.object(["delivered": .array([.string(hello), .string(hello)])])), "malformed_message"),
            ("a code that is not one", mallory,
             receipt(.object(["failed": .array([.object(["id": .string(hello), "error": .string("<b>ok</b>")])])])), "malformed_message"),
            ("too many", mallory, Receipt(delivered: (0...Receipt.maxEntries).map { _ in Hex.encode(SecureRandom.bytes(16)) }).encode(),
             "malformed_message"),
        ]
        let before = try snapshot(alice)
        for (what, signer, content, code) in cases {
            let payload = try signer.push(contentType: ContentType.receipt, content: content)
            let ack = try deliver(payload, to: alice)
            guard case .error(let refusal) = ack else { Issue.record("\(what): accepted"); continue }
            #expect(refusal.code.rawValue == code, "\(what): \(refusal)")
        }
        #expect(try snapshot(alice) == before, "nothing written")
        #expect(try outboxStates(alice, hello) == ["delivered"])
    }

    @Test("bob's daemon SIGKILLed after sealing a receipt, before queueing it: the entry is still owed, and after the restart alice's push ends delivered, once")
    func crashBeforeQueueing() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob])
        try bob.waitUntil("bob owes nothing from the join") { try count(bob, "receipt_due") == 0 && count(bob, "outliving_notice") == 0 }
        bob.stopDaemon()
        try bob.startDaemon(environment: [CrashPoint.variable: "receipts.sealed"])

        // bob's worker (its push socket runs without the daemon) stores it and records the entry.
        let sent = try require(try alice.json(["send", trip, "mind the gap"])["messageId"] as? String)
        try bob.waitUntil("bob's daemon died at receipts.sealed") { !bob.daemonIsRunning }
        #expect(bob.daemonKillSignal == SIGKILL)
        bob.stopDaemon()
        #expect(try bob.query("SELECT messageId, status FROM receipt_due").map { "\(try $0.string(0)) \(try $0.string(1))" }
                == ["\(sent) delivered"])
        #expect(try count(bob, "outliving_notice") == 0)
        #expect(try outboxStates(alice, sent) == ["sent"])

        try bob.startDaemon()  // its start-up pass seals what is owed
        try alice.waitUntil("bob's receipt after the restart") { try outboxStates(alice, sent) == ["delivered"] }
        try bob.waitUntil("bob owes nothing and has nothing queued") {
            try count(bob, "receipt_due") == 0 && count(bob, "outliving_notice") == 0
        }
    }

    @Test("the receipts method: garbage params and unknown conversations are clear errors and change nothing")
    func garbageParams() throws {
        let home = try DaemonHome()
        let daemon = try DaemonProcess.start(home: home)
        defer { _ = try? daemon.stop() }
        let id = try require(try daemon.result("newConversation", ["name": "Quiet"])["conversationId"] as? String)
        let cases: [([String: Any], Int64, String)] = [
            (["conversation": id, "enabled": "no"], -32602, "'enabled' must be a boolean"),
            (["conversation": id, "enabled": 0], -32602, "'enabled' must be a boolean"),
            (["conversation": "", "enabled": false], -32602, "'conversation' must be a non-empty string"),
            (["enabled": false], -32602, "'conversation' must be a non-empty string"),
            (["conversation": "ffffffffff", "enabled": false], -32001, "no conversation matches 'ffffffffff'"),
        ]
        for (params, code, text) in cases {
            let error = try require(try daemon.call("receipts", params)["error"] as? [String: Any], "\(params)")
            #expect(int64(error["code"]) == code, "\(params)")
            #expect((error["message"] as? String)?.contains(text) == true, "\(params): \(error)")
        }
        #expect(try daemon.result("receipts", ["conversation": id])["enabled"] as? Bool == true, "unchanged: still on")
    }

    // MARK: - Helpers

    private func outboxStates(_ device: Device, _ messageId: String) throws -> [String] {
        try device.query("SELECT state FROM outbox WHERE messageId = ? ORDER BY memberInboxId", [.text(messageId)]).map { try $0.string(0) }
    }

    private func outboxState(_ device: Device, _ messageId: String, member: String) throws -> String? {
        try device.query("SELECT state FROM outbox WHERE messageId = ? AND memberInboxId = ?", [.text(messageId), .text(member)])
            .first?.string(0)
    }

    private func count(_ device: Device, _ table: String) throws -> Int64 {
        try device.query("SELECT count(*) FROM \(table)")[0].int64(0)
    }

    private func inboxId(_ device: Device, _ conversation: String) throws -> String {
        try require(try device.query("SELECT inboxId FROM conversation WHERE id = ?", [.text(conversation)]).first?.string(0))
    }

    /// Every row a receipt could touch on the sender's device.
    private func snapshot(_ device: Device) throws -> [String] {
        let outbox = try device.query("SELECT messageId, memberInboxId, state, coalesce(lastError, '') FROM outbox ORDER BY 1, 2")
            .map { row in try (0..<4).map { try row.string($0) }.joined(separator: "|") }
        return outbox + ["due \(try count(device, "receipt_due"))", "messages \(try count(device, "message"))",
                         "notices \(try count(device, "outliving_notice"))"]
    }

    /// One push to the device's push socket, as a direct sender sends it; the worker's ack.
    private func deliver(_ payload: [UInt8], to device: Device) throws -> PushAck {
        let fd = UnixSocket.connect(device.runtime.pushSocketPath)
        guard fd >= 0 else { throw Device.Failure(message: "push socket unreachable") }
        defer { close(fd) }
        guard case .acked(let ack) = PushExchange.run(fd, payload: payload, timeoutMs: 30_000) else {
            throw Device.Failure(message: "no ack")
        }
        return ack
    }
}
