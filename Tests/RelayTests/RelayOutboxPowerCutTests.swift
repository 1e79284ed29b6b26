import Foundation
import RelayTransport
import SottoCrypto
import SottoWire
import Testing
import TestSupport

/// Issue #21: alice's daemon killed at a named step of publishing to the relay, the power cut
/// with it: after the relay stored the push and before her database says so
/// (`outbox.relayed`), or after a long text's body went to the relay and before any push
/// names it (`outbox.bodyPublished`). Alice's group directory lies on the power-cut file
/// system (docs/adr/0037); the relay's store (nats-server) and bob do not. Bob's relayd is
/// stopped meanwhile, so what the relay holds for him can be counted. The SIGKILL versions:
/// RelaySendingTests.crashBetweenAckAndRecord, FanoutCrashTests.
@Suite("Relay outbox power cut", .serialized,
       .enabled(if: NatsServer.isInstalled && PowerCutFileSystem.isAvailable, "needs nats-server, root, /dev/fuse and fusermount3"))
struct RelayOutboxPowerCutTests {
    struct Case: CustomTestStringConvertible, CustomStringConvertible, Sendable {
        let crashAt: String
        /// A text long enough to go by reference: its body is published before the push.
        let long: Bool
        var testDescription: String { "\(crashAt), \(long ? "64 KiB text by reference" : "short text")" }
        var description: String { testDescription }
    }

    static let cases = [Case(crashAt: "outbox.relayed", long: false), Case(crashAt: "outbox.bodyPublished", long: true)]
    /// Each step with all unsynced writes lost; torn at the body's publish too (short), or each
    /// step with each kind (full, `SOTTO_STRESS_PROFILE=full`).
    static let rounds = PowerCutRound.plan(steps: cases, tornAt: cases[1], seed: 13)

    @Test("Killed at the step, the power cut with it (all unsynced writes lost; the last one torn; under the full profile a random half too), restarted: the send is on alice's disk with its push still pending, the push goes out at most once more (the relay keeps one copy, one body) and is never lost: bob stores it once, alice's outbox ends delivered with no body kept",
          arguments: rounds)
    func publishStepSurvivesPowerCut(_ round: PowerCutRound<Case>) async throws {
        // Blocking steps: on a thread of their own, not the test pool's (async tests starve).
        try await onOwnThread { try self.publishStepSurvivesPowerCutSteps(round.step, round.cut) }
    }

    private func publishStepSurvivesPowerCutSteps(_ step: Case, _ cut: PowerCutFileSystem.Cut) throws {
        let started = Date()
        guard let rig = try OutboxPowerCutRig.make() else { return }
        defer { rig.tearDown() }
        let (alice, bob) = (rig.alice, rig.bob)
        try rig.arm(step.crashAt)
        let text = step.long ? FanoutCrashTests.longText : "relayed across a power cut"
        let (died, summary) = try rig.sendAndCut(text, at: step.crashAt, cut: cut)
        #expect(died, "\(step.crashAt) never reached")

        // The send was committed (and fsynced) before its first publish: it is on the disk once,
        // its push pending, since the relay's answer was never recorded.
        let relay = try rig.peers.relay()
        let ids = try rig.sentIds()
        #expect(ids.count == 1, "the send is on alice's disk \(ids.count) times")
        let id = try #require(ids.first)
        let states = { try alice.query("SELECT state FROM outbox WHERE messageId = ?", [.text(id)]).map { try $0.string(0) } }
        #expect(try states() == ["pending"])
        let copiesBefore = try relay.storedCount(rig.bobBox)
        let bodiesBefore = try relay.bodyStreamUsage().messages
        #expect(copiesBefore == (step.crashAt == "outbox.relayed" ? 1 : 0), "bob's mailbox held \(copiesBefore) before the restart")
        #expect(bodiesBefore == (step.long ? 1 : 0), "the relay held \(bodiesBefore) bodies before the restart")

        try rig.restartAlice()
        try alice.waitUntil("relayed after the restart", timeoutMs: 60_000) { try states() == ["relayed"] }
        // Published again, de-duplicated by the relay: one copy, one body.
        let copiesAfter = try relay.storedCount(rig.bobBox)
        #expect(copiesAfter == 1, "bob's mailbox holds \(copiesAfter) copies")
        #expect(try relay.bodyStreamUsage().messages == (step.long ? 1 : 0))

        try rig.peers.startRelayd("bob")
        try bob.waitUntil("bob stored it", timeoutMs: 60_000) {
            try bob.storedTexts(conversation: rig.conversation).contains { $0.text == text }
        }
        try bob.waitUntil("bob's mailbox is empty", timeoutMs: 30_000) { try relay.storedCount(rig.bobBox) == 0 }
        #expect(try bob.storedTexts(conversation: rig.conversation).filter { $0.text == text }.count == 1, "bob stored it more than once")
        try alice.waitUntil("alice's push delivered (bob's receipt)", timeoutMs: 60_000) { try states() == ["delivered"] }
        #expect(try alice.query("SELECT count(*) FROM outbox_body")[0].int64(0) == 0, "alice keeps the body")
        #expect(try alice.query("PRAGMA integrity_check")[0].string(0) == "ok")
        print("RELAY outbox power cut at \(step.crashAt) (cut \(cut)): \(summary); before the restart bob's mailbox held \(copiesBefore), "
              + "the relay \(bodiesBefore) bodies; seconds=\(String(format: "%.1f", Date().timeIntervalSince(started)))")
    }
}
