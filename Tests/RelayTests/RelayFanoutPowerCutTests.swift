import Foundation
import RelayTransport
import SottoWire
import Testing
import TestSupport

/// Issue #21 for a fan-out (issue #17): alice sends a long text to bob and 300 seeded members
/// (TestSupport FanoutMembers, real keys, reached through the same nats-server) and her daemon
/// dies at `outbox.relayed@280`: the relay stored the whole second window of publishes
/// (pushes 257–301), her database recorded the first window of 256 only. The power is cut with
/// it; her group directory lies on the power-cut file system (docs/adr/0037), the relay's store
/// and bob do not. The SIGKILL version: FanoutCrashTests.
///
/// After the cut her disk holds the send once, the first window relayed and the rest pending
/// (each window's record is one fsynced commit). After the restart the rest is published
/// again under the same message ids and the relay drops the copies: every member's mailbox
/// holds the message once, the relay one body; bob stores it once; alice's outbox ends
/// relayed (delivered for bob, by his receipt) with no body kept, and her file is sound.
@Suite("Relay fan-out power cut", .serialized,
       .enabled(if: NatsServer.isInstalled && PowerCutFileSystem.isAvailable, "needs nats-server, root, /dev/fuse and fusermount3"))
struct RelayFanoutPowerCutTests {
    static let seededMembers = 300
    /// Past the first window of 256 (`RelayConnection.defaultPublishWindow`), short of the last push.
    static let crashAt = "outbox.relayed@280"
    static let rounds = PowerCutRound.plan(steps: [crashAt], tornAt: crashAt, seed: 17)

    @Test("Killed mid fan-out after the first window was recorded, the power cut with it (all unsynced writes lost; the last one torn; under the full profile a random half too), restarted: every member's mailbox holds the message once, alice's outbox ends relayed or delivered, no body left behind, the file sound",
          arguments: rounds)
    func fanoutSurvivesPowerCut(_ round: PowerCutRound<String>) async throws {
        // Blocking steps: on a thread of their own, not the test pool's (async tests starve).
        try await onOwnThread { try self.fanoutSurvivesPowerCutSteps(round.step, round.cut) }
    }

    private func fanoutSurvivesPowerCutSteps(_ crashAt: String, _ cut: PowerCutFileSystem.Cut) throws {
        let started = Date()
        guard let rig = try OutboxPowerCutRig.make() else { return }
        defer { rig.tearDown() }
        let (alice, bob) = (rig.alice, rig.bob)
        let members = try FanoutMembers.seed(conversationId: rig.conversation, databasePath: alice.group.databasePath,
                                             count: Self.seededMembers, endpoint: rig.peers.server.url)
        let mailboxes = try members.map { try Mailbox(clientId: $0.identity.clientId).subject } + [rig.bobBox.subject]
        let window = RelayConnection.defaultPublishWindow
        try rig.arm(crashAt)
        let (died, summary) = try rig.sendAndCut(FanoutCrashTests.longText, at: crashAt, cut: cut)
        var findings: [String] = []
        let check = { (holds: Bool, finding: @autoclosure () -> String) in if !holds { findings.append(finding()) } }
        check(died, "\(crashAt) never reached")

        // The send and the first window's record were fsynced commits; the second window's
        // publishes were never recorded.
        let relay = try rig.peers.relay()
        let ids = try rig.sentIds()
        let id = try #require(ids.first, "the send is not on alice's disk")
        check(ids.count == 1, "the send is on alice's disk \(ids.count) times")
        let statesBefore = try rig.outboxStates(id)
        check(statesBefore == ["relayed": window, "pending": mailboxes.count - window], "after the cut alice's outbox: \(statesBefore)")
        // A positive control: the relay took every push before the kill, so the restart's
        // publishes are all second copies.
        let storedBefore = try relay.storedCountsByMailbox()
        check(mailboxes.allSatisfy { storedBefore[$0] == 1 }, "not every member's mailbox held one copy before the restart")
        let bodiesBefore = try relay.bodyStreamUsage().messages
        check(bodiesBefore == 1, "the relay held \(bodiesBefore) bodies before the restart")

        try rig.restartAlice()
        try alice.waitUntil("all \(mailboxes.count) pushes relayed after the restart", timeoutMs: 60_000) {
            try rig.outboxStates(id) == ["relayed": mailboxes.count]
        }
        let stored = try relay.storedCountsByMailbox()
        let perMember = mailboxes.map { stored[$0] ?? 0 }
        check(perMember.allSatisfy { $0 == 1 },
              "\(perMember.filter { $0 == 0 }.count) members got nothing, \(perMember.filter { $0 > 1 }.count) got it twice")
        check(stored.count == mailboxes.count, "mailboxes that are no member's: \(stored.count - mailboxes.count)")
        let bodies = try relay.bodyStreamUsage().messages
        check(bodies == 1, "the relay holds \(bodies) bodies")

        try rig.peers.startRelayd("bob")
        try bob.waitUntil("bob stored it", timeoutMs: 60_000) {
            try bob.storedTexts(conversation: rig.conversation).contains { $0.text == FanoutCrashTests.longText }
        }
        let onBob = try bob.storedTexts(conversation: rig.conversation).filter { $0.text == FanoutCrashTests.longText }.count
        check(onBob == 1, "bob stored it \(onBob) times")
        try alice.waitUntil("alice's push to bob delivered (his receipt)", timeoutMs: 60_000) {
            try rig.outboxStates(id) == ["relayed": Self.seededMembers, "delivered": 1]
        }
        check(try alice.query("SELECT count(*) FROM outbox_body")[0].int64(0) == 0, "alice keeps the body")
        let integrity = try alice.query("PRAGMA integrity_check")[0].string(0)
        check(integrity == "ok", "integrity_check: \(integrity)")
        print("RELAY fan-out power cut at \(crashAt) (cut \(cut)), \(mailboxes.count) members: \(summary); after the cut "
              + "\(statesBefore["relayed"] ?? 0) relayed, \(statesBefore["pending"] ?? 0) pending; findings=\(findings.count) "
              + "seconds=\(String(format: "%.1f", Date().timeIntervalSince(started)))")
        for finding in findings { print("  finding: \(finding)") }
        #expect(findings.isEmpty, "\(findings)")
    }
}
