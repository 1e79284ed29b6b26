import Foundation
import RelayTransport
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Issue #17, "How it is checked": a fan-out to 1,000 members through a real nats-server,
/// the sending daemon SIGKILLed at a named step (mid fan-out, after the body upload and
/// before any push, after the commit), then started again: every member's mailbox holds the
/// message exactly once, the daemon keeps no body, and the relay holds the body once, under
/// the stream's age limit (docs/adr/0041). The members are seeded in the sender's database
/// with real keys (TestSupport FanoutMembers); the relay's stream is where they would read.
@Suite("Fan-out to 1,000 members, killed at each step", .serialized,
       .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct FanoutCrashTests {
    static let memberCount = 1_000
    static let longText = String(repeating: "the whole plan, step by step; ", count: ContentLimits.maxTextBytes / 30)

    struct Case: CustomTestStringConvertible, Sendable {
        let crashAt: String
        let long: Bool
        var testDescription: String { "\(crashAt), \(long ? "64 KiB text by reference" : "short text")" }
    }

    static let cases = [
        // The second window of 256 published, the first one recorded.
        Case(crashAt: "outbox.relayed@300", long: false),
        Case(crashAt: "outbox.bodyPublished", long: true),
        Case(crashAt: "outbox.relayed@700", long: true),
        Case(crashAt: "send.committed", long: true),
    ]

    @Test("Killed at the step, restarted: every member's mailbox holds the message once, no body left behind", arguments: cases)
    func killedDuringFanout(_ step: Case) async throws {
        // Minutes of blocking steps: on a thread of their own, not the test pool's (async tests starve).
        try await onOwnThread { try self.killedDuringFanoutSteps(step) }
    }

    private func killedDuringFanoutSteps(_ step: Case) throws {
        let tmp = try TemporaryDirectory(prefix: "fcrash")
        defer { tmp.remove() }
        let server = try NatsServer.start(storeDirectory: tmp.path + "/js")
        defer { server.stop() }
        let alice = try Device.start("alice", in: tmp.path)
        defer { alice.stop() }
        let conversation = try #require(try alice.json(["new", "--name", "Big"])["conversationId"] as? String)
        let members = try FanoutMembers.seed(conversationId: conversation, databasePath: alice.group.databasePath,
                                             count: Self.memberCount, endpoint: server.url)

        alice.stopDaemon()
        try alice.startDaemon(environment: [CrashPoint.variable: step.crashAt])
        let text = step.long ? Self.longText : "meet at the station at 9"
        _ = try alice.cli(["send", conversation, text])  // the daemon may die before it answers
        #expect(try alice.diedAtCrashPoint(step.crashAt, timeoutMs: 60_000), "\(step.crashAt) never reached")
        let relay = try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(server.url)))
        defer { relay.close() }
        let storedBeforeRestart = try relay.storedCountsByMailbox().values.reduce(0, +)

        try alice.startDaemon()
        let id = try #require(try alice.query("SELECT id FROM message WHERE conversationId = ? AND isOutgoing = 1",
                                              [.text(conversation)]).first?.string(0))
        try alice.waitUntil("all \(Self.memberCount) pushes relayed", timeoutMs: 60_000) {
            try alice.query("SELECT count(*) FROM outbox WHERE messageId = ? AND state = 'relayed'", [.text(id)])[0].int64(0)
                == Int64(Self.memberCount)
        }

        let counts = try relay.storedCountsByMailbox()
        let perMember = try members.map { counts[try Mailbox(clientId: $0.identity.clientId).subject] ?? 0 }
        #expect(perMember.filter { $0 != 1 }.isEmpty,
                "\(perMember.filter { $0 == 0 }.count) members got nothing, \(perMember.filter { $0 > 1 }.count) got it twice")
        #expect(counts.count == Self.memberCount, "mailboxes that are no member's: \(counts.count - Self.memberCount)")
        #expect(try alice.query("SELECT count(*) FROM outbox_body")[0].int64(0) == 0)
        #expect(try alice.query("SELECT deliveryStatus FROM message WHERE id = ?", [.text(id)]).first?.string(0) == "sent")
        if step.long {
            #expect(try relay.bodyStreamUsage().messages == 1)
            #expect(try relay.streamMaxAgeMs(BodyStream.streamName) == MailboxStream.defaultMaxAgeMs)
        }
        // A positive control: the kill came mid-way, not before or after everything.
        if step.crashAt.hasPrefix("outbox.relayed@") {
            #expect(storedBeforeRestart >= 256 && storedBeforeRestart < UInt64(Self.memberCount),
                    "\(storedBeforeRestart) stored before the restart")
        } else {
            #expect(storedBeforeRestart == 0)
        }
    }
}
