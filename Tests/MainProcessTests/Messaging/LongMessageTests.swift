import ControlProtocol
import Foundation
import SottoClient
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Issue #17: texts up to 64 KiB and replies with any quote, by reference
/// (docs/protocol/bodies.md, docs/adr/0032), between real daemons with their real workers on
/// real sockets; nothing over the limit is stored to fail later.
@Suite("Messaging: long messages by reference", .serialized)
struct LongMessageTests {
    /// Exactly `bytes` bytes of UTF-8 that are hard on every layer: mostly control characters
    /// (six bytes each once JSON escapes them, so the control request of a 64 KiB text is over
    /// 256 KiB), then accents, quotes, backslashes, double spaces and line breaks.
    static func hardText(bytes: Int = ContentLimits.maxTextBytes) -> String {
        let unit = "é\u{1}  \"\\\n"                      // 8 bytes
        let tail = bytes * 23 / 100 / 8
        return String(repeating: "\u{1}", count: bytes - tail * 8) + String(repeating: unit, count: tail)
    }

    static func messageId(_ sent: [String: Any]) throws -> String {
        try require(sent["messageId"] as? String, "messageId")
    }

    /// The message as `sotto read --json` shows it on `device`.
    static func read(_ device: Device, _ conversation: String, id: String) -> [String: Any]? {
        device.messages(conversation).first { $0["id"] as? String == id }
    }

    /// How many rows `device` stored for message `id`, and its content.
    static func stored(_ device: Device, id: String) throws -> (count: Int64, contentType: String?, content: [UInt8]?) {
        let count = try device.query("SELECT count(*) FROM message WHERE id = ?", [.text(id)])[0].int64(0)
        let row = try device.storedMessage(id: id)
        return (count, row?.contentType, row?.content)
    }

    static func outboxBodies(_ device: Device) throws -> Int64 {
        try device.query("SELECT count(*) FROM outbox_body")[0].int64(0)
    }

    /// The pushes `device` queued for message `id`, decoded.
    static func pushes(_ device: Device, id: String) throws -> [PushPayload] {
        try device.query("SELECT payload FROM outbox WHERE messageId = ?", [.text(id)]).map { try PushPayload.decode(try $0.blob(0)) }
    }

    @Test("a 64 KiB text of any characters reaches two real daemons once; read and watch show it whole; a short text stays inline; the body is gone after")
    func longTextToTwoMembers() throws {
        let net = try Network(["alice", "bob", "carol"])
        let (alice, bob, carol) = (net["alice"], net["bob"], net["carol"])
        let trip = try net.conversation(creator: alice, joiners: [bob, carol])
        let text = Self.hardText()
        #expect(text.utf8.count == 65_536)

        let long = try Self.messageId(try alice.json(["send", trip, text]))
        let short = try Self.messageId(try alice.json(["send", trip, "train at 9?"]))
        // Every push of the long one references its body; the short one is as before.
        let longPushes = try Self.pushes(alice, id: long)
        #expect(longPushes.count == 2 && longPushes.allSatisfy { $0.body != nil })
        #expect(Set(longPushes.compactMap { $0.body?.id }).count == 1)
        let shortPushes = try Self.pushes(alice, id: short)
        #expect(shortPushes.count == 2 && shortPushes.allSatisfy { $0.body == nil })
        #expect(try alice.query("SELECT payload FROM outbox WHERE messageId = ?", [.text(short)])
            .allSatisfy { !String(decoding: try $0.blob(0), as: UTF8.self).contains("\"body\"") })

        for member in [bob, carol] {
            try member.waitUntil("\(member.name) has the long text") { Self.read(member, trip, id: long) != nil }
            #expect(Self.read(member, trip, id: long)?["text"] as? String == text)
            let stored = try Self.stored(member, id: long)
            #expect(stored.count == 1)
            #expect(stored.contentType == ContentType.text)
            #expect(stored.content == Array(text.utf8))
            try member.waitUntil("\(member.name) has the short text") { hasText(member, trip, "train at 9?") }
            // The plain `sotto read` prints it whole too, its controls shown, not obeyed (docs/adr/0062).
            #expect(try member.cli(["read", trip]).stdout.contains(InertText.lines(text, continuation: "  ┆ ")))
        }
        try alice.waitUntil("alice shows both sent") {
            Self.read(alice, trip, id: long)?["deliveryStatus"] as? String == "delivered"
                && Self.read(alice, trip, id: short)?["deliveryStatus"] as? String == "delivered"
        }
        #expect(Self.read(alice, trip, id: long)?["text"] as? String == text)
        // Each member's push went once: acked at the first attempt, so no second copy was sent.
        #expect(try alice.query("SELECT attempts FROM outbox WHERE messageId = ?", [.text(long)]).map { try $0.int64(0) } == [1, 1])
        #expect(try Self.outboxBodies(alice) == 0)

        // `sotto watch --json` replays it whole (one line per change, the text untouched).
        let watch = try LoggedProcess.launch(try builtExecutable("sotto"), ["watch", "--json", "--since", "0", "--conversation", trip],
                                             environment: ProcessInfo.processInfo.environment.merging(bob.environment) { $1 })
        defer { watch.signal(SIGTERM); _ = watch.waitForExit() }
        #expect(watch.waitForLine(containing: long, timeout: 20))
        let line = try require(watch.output.first { $0.contains(long) && $0.contains("\"messageInserted\"") }, "watch line")
        let change = try require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "watch JSON")
        #expect(change["text"] as? String == text)
    }

    @Test("a reply with a 30 KB quote arrives whole, with its reference")
    func replyWithLongQuote() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])
        let question = try Self.messageId(try alice.json(["send", trip, "what did the guide say?"]))
        try bob.waitUntil("bob has the question") { hasText(bob, trip, "what did the guide say?") }

        let quote = String(repeating: "«Le train part à 9 h.» ", count: 30_000 / 26 + 1)
        #expect(quote.utf8.count > 30_000)
        let reply = try Self.messageId(try bob.json(["send", trip, quote, "--reply-to", String(question.prefix(8))]))
        #expect(try Self.pushes(bob, id: reply).allSatisfy { $0.body != nil })
        try alice.waitUntil("alice has the reply") { Self.read(alice, trip, id: reply) != nil }
        let arrived = try require(Self.read(alice, trip, id: reply))
        #expect(arrived["text"] as? String == quote)
        #expect(arrived["referenceId"] as? String == question)
        #expect(try Self.stored(alice, id: reply).contentType == ContentType.reply)
        try bob.waitUntil("bob shows the reply sent") { Self.read(bob, trip, id: reply)?["deliveryStatus"] as? String == "delivered" }
        #expect(try Self.outboxBodies(bob) == 0)
    }

    @Test("a member's socket down, the sender SIGKILLed and killed again right after the delivery: the body waits in the sender's database and the member stores the message exactly once")
    func pendingAcrossCrashes() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])
        let text = Self.hardText(bytes: 40_000)
        // Only alice's outbox says what happened to the push here: bob's receipt would mark
        // it delivered while alice is down (that path: ReceiptTests).
        _ = try bob.json(["receipts", trip, "--off"])

        bob.stopPushSocket()
        let id = try Self.messageId(try alice.json(["send", trip, text]))
        try alice.waitUntil("a failed attempt is recorded") {
            try alice.query("SELECT attempts FROM outbox WHERE messageId = ? AND state = 'pending'", [.text(id)]).first?.int64(0) ?? 0 >= 1
        }
        #expect(try Self.outboxBodies(alice) == 1)
        alice.stopDaemon(signal: SIGKILL)
        #expect(try Self.outboxBodies(alice) == 1)

        // bob is back; alice restarts and dies right after bob acked, before recording it.
        try bob.startPushSocket()
        try? alice.startDaemon(environment: [CrashPoint.variable: "outbox.delivered"])   // may die before it answers
        try bob.waitUntil("bob has it from alice's first run after the crash") { try Self.stored(bob, id: id).count == 1 }
        try alice.waitUntil("alice's daemon died at outbox.delivered") { !alice.daemonIsRunning }
        #expect(alice.daemonKillSignal == SIGKILL)
        alice.stopDaemon()
        #expect(try alice.query("SELECT state FROM outbox WHERE messageId = ?", [.text(id)]).map { try $0.string(0) } == ["pending"])
        #expect(try Self.outboxBodies(alice) == 1)

        // The next run delivers again, body and all; bob's worker finds it stored and says so.
        try alice.startDaemon()
        try alice.waitUntil("alice shows it sent") { Self.read(alice, trip, id: id)?["deliveryStatus"] as? String == "sent" }
        #expect(try Self.outboxBodies(alice) == 0)
        let stored = try Self.stored(bob, id: id)
        #expect(stored.count == 1)
        #expect(stored.content == Array(text.utf8))
        #expect(Self.read(bob, trip, id: id)?["text"] as? String == text)
    }

    @Test("texts at the limit: 65,536 bytes of control characters are sent (the request line is 6× that), 65,537 bytes are refused by the CLI and by the daemon with nothing stored")
    func limitAndRefusal() throws {
        let tmp = try TemporaryDirectory(prefix: "sl")
        let alice = try Device.start("alice", in: tmp.path)
        defer { alice.stop() }
        let trip = try require(try alice.json(["new", "--name", "Solo"])["conversationId"] as? String)
        func count() throws -> Int64 {
            try alice.query("SELECT count(*) FROM message WHERE conversationId = ?", [.text(trip)])[0].int64(0)
        }

        let worst = String(repeating: "\u{1}", count: ContentLimits.maxTextBytes)
        let sent = try Self.messageId(try alice.json(["send", trip, worst]))
        #expect(Self.read(alice, trip, id: sent)?["text"] as? String == worst)
        #expect(try count() == 1)

        let over = String(repeating: "a", count: ContentLimits.maxTextBytes + 1)
        let refused = try alice.cli(["send", trip, over])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("65537 bytes"), "\(refused.stderr)")
        #expect(refused.stderr.contains("65536"))

        // The daemon says the same to any other client.
        let client = try ControlClient.connect(path: alice.runtime.controlSocketPath)
        #expect {
            try client.call(SendMessageParams(conversation: trip, text: over))
        } throws: { error in
            guard case .rpc(let object)? = error as? ControlClient.Failure else { return false }
            return object.code == .invalidParams && object.message.contains("65537")
        }
        #expect(try count() == 1)
        #expect(try alice.query("SELECT count(*) FROM outbox")[0].int64(0) == 0)
    }
}
