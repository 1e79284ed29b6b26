import Foundation
import Testing
import TestSupport

extension StressSuite {
/// Issue #21: what was acked survives a power cut, not only a SIGKILL. The group directory
/// lies on the power-cut file system (docs/adr/0037); it forgets what was not fsynced.
@Suite("Stress: power cut", .enabled(if: PowerCutFileSystem.isAvailable, "needs root, /dev/fuse and fusermount3"))
struct PowerCutTests {
    @Test("Push storms through real workers, the power cut mid-storm (all unsynced writes, a random half, the last one torn): every ok ack is on the disk once, the file is sound, redelivery completes it")
    func pushStormSurvivesPowerCut() async throws {
        let full = StressProfile.current.name == "full"
        let storm = PowerCutStorm(rounds: full ? 1_002 : 3, pushesPerRound: full ? 24 : 120)
        let report = try await onDedicatedThread { try storm.run() }
        print(report.summaryLine)

        #expect(report.cuts == storm.rounds)
        #expect(report.tornCuts == storm.rounds / 3, "every third round cuts torn")
        #expect(report.tornDamaged.isEmpty, "\(report.tornDamaged.prefix(5))")
        #expect(report.okBeforeCut >= storm.rounds)
        #expect(report.transportFailures.isEmpty, "\(report.transportFailures.prefix(5))")
        // The story needs the power to go while work was in flight.
        #expect(report.refusedAfterArming > 0, "no push met the dead disk")
        #expect(report.notRetryable.isEmpty, "a dead disk answered for good: \(report.notRetryable.prefix(5))")
        #expect(report.integrityFailures.isEmpty, "\(report.integrityFailures.prefix(5))")
        #expect(report.ackedLost.isEmpty, "acked ok, lost by a cut: \(report.ackedLost.prefix(5))")
        #expect(report.duplicates.isEmpty)
        #expect(report.storedNotSent == 0)
        #expect(report.redeliveryErrors.isEmpty, "\(report.redeliveryErrors.prefix(5))")
        #expect(report.storedAfterRedelivery == storm.rounds * storm.pushesPerRound)
    }

    @Test("Killed at each named step of explode and the power cut with it: after the restart alice's database and keystore hold the conversation whole or not at all, and bob agrees",
          arguments: [PowerCutFileSystem.Cut.all, .subset(seed: 3, keepPercent: 50)])
    func explodeSurvivesPowerCut(cut: PowerCutFileSystem.Cut) async throws {
        try await check(.explode, cut)
    }

    @Test("Killed at each named step of a join acceptance and of a send, and at a random moment of each, the power cut with it: the joiner is told once, the message is stored with its pushes or not at all (stored if the CLI reported it) and reaches bob once")
    func joinAndSendSurvivePowerCut() async throws {
        try await check(.join, .all)
        try await check(.send, .all)
    }

    @Test("Killed at each named step of a leave and of a removal, and at a random moment of each, the power cut with it: the leaver holds the conversation whole or not at all and the others agree; a removal is on the creator's disk with its pushes or not at all, and the removed device deletes the conversation once; what the CLI reported done is on the disk")
    func leaveAndRemoveSurvivePowerCut() async throws {
        try await check(.leave, .all)
        try await check(.remove, .all)
    }

    @Test("A scheduled explode (--in 5s) killed at each named step of its commit and of its timer's deletion, the power cut with it (all unsynced writes lost; the last one torn; under make stress a random half too): after the restart the conversation is whole with no schedule, or still scheduled for the time asked and then gone on both devices at that time (the restarted timer fires it), never half and never early")
    func scheduledExplodeSurvivesPowerCut() async throws {
        let profile = StressProfile.current
        let steps = CrashAtomicity(profile: profile, operation: .scheduledExplode).points
        // Torn at the deletion's commit: the restarted timer must finish from what the torn disk kept.
        let plan = PowerCutRound.plan(steps: steps, tornAt: "explode.rowsCommitted", seed: 17, full: profile.name == "full")
        try await check(.scheduledExplode, plan: plan)
    }

    /// `plan`: each named step with a cut of its own; `cut`: the random kills' (and without a
    /// plan, every round's).
    private func check(_ operation: CrashAtomicity.Operation, _ cut: PowerCutFileSystem.Cut? = nil,
                       plan: [PowerCutRound<String>]? = nil) async throws {
        let profile = StressProfile.current
        let report = try await onDedicatedThread {
            try CrashAtomicity(profile: profile, operation: operation, powerCut: cut, plan: plan).run()
        }
        print(report.summaryLine)
        for summary in report.powerCuts { print("  power cut: \(summary)") }
        for finding in report.findings { print("  finding: \(finding)") }

        #expect(report.rounds > 0)
        if let plan { #expect(report.rounds == plan.count + report.randomKills) }
        #expect(report.notReached.isEmpty, "crash points never reached: \(report.notReached)")
        #expect(report.powerCuts.count == report.namedKills + report.randomKills)
        #expect(report.findings.isEmpty, "\(report.findings)")
    }
}
}

extension StressSuite.PowerCutTests {
    @Test("EIO and ENOSPC at each write and each fsync of a push: a retryable error, nothing stored, the file sound; stored once the fault goes",
          arguments: [PowerCutFileSystem.Fault.write, .sync], ["EIO", "ENOSPC"])
    func pushFaults(fault: PowerCutFileSystem.Fault, error: String) async throws {
        let report = try await onDedicatedThread { try PushFaults(fault: fault, error: error).run() }
        print(report.summaryLine)
        #expect(report.faultedSteps >= (fault == .write ? 2 : 1), "the push never met its fault")
        #expect(report.stepsBeyondPush, "the fault index never passed the push's own \(fault)s")
        #expect(report.findings.isEmpty, "\(report.findings.prefix(5))")
    }
}

extension StressSuite.PowerCutTests {
    @Test("The power cut while a burst of sends runs: every message the daemon reported sent is on alice's disk once, and reaches bob once")
    func sendBurstSurvivesPowerCut() async throws {
        let profile = StressProfile.current
        let report = try await onDedicatedThread { try DaemonCrash(profile: profile, powerCut: .all).run() }
        print(report.summaryLine)
        for summary in report.powerCuts { print("  power cut: \(summary)") }
        #expect(report.powerCuts.count == report.kills)
        #expect(report.reported > 0)
        #expect(report.reportedMissing == 0, "reported sent, lost by the cut")
        #expect(report.reportedTwice == 0)
        #expect(report.deliveredInTime)
        #expect(report.receiverMissing == 0)
        #expect(report.receiverExtra == 0)
        #expect(report.receiverDuplicateTexts == 0)
        #expect(report.outboxNotSent == 0)
        #expect(report.integritySender == "ok")
        #expect(report.integrityReceiver == "ok")
    }
}

extension StressSuite.PowerCutTests {
    @Test("Explode to an offline member, killed at each named step and the power cut with it: the push survives in the outbox or the notice queue, the member deletes the conversation when back, the sender ends with nothing")
    func offlineExplodeSurvivesPowerCut() async throws {
        let report = try await onDedicatedThread { try OfflineExplodeCrash(powerCut: .all).run() }
        report.expectEveryRoundSound(rounds: OfflineExplodeCrash.points.count)
    }
}

extension StressSuite.PowerCutTests {
    @Test("EIO and ENOSPC at each write and each fsync of a send: a clear error, nothing half-stored, the file sound and the daemon answering; sent once the fault goes, and the member gets each sent text once",
          arguments: [PowerCutFileSystem.Fault.write, .sync], ["EIO", "ENOSPC"])
    func sendFaults(fault: PowerCutFileSystem.Fault, error: String) async throws {
        let report = try await onDedicatedThread { try SendFaults(fault: fault, error: error).run() }
        print(report.summaryLine)
        for finding in report.findings { print("  finding: \(finding)") }
        #expect(report.faultedSteps > 0, "no send met its fault")
        #expect(report.stepsBeyondSend, "the fault index never passed the send's own \(fault)s")
        #expect(report.findings.isEmpty, "\(report.findings.prefix(5))")
    }

    @Test("EIO and ENOSPC at each write and each fsync of an immediate explode: a clear error or done; once the fault goes the conversation is whole or gone (a restart finishes a tombstone), never half, and the daemon stays alive",
          arguments: [PowerCutFileSystem.Fault.write, .sync], ["EIO", "ENOSPC"])
    func explodeFaults(fault: PowerCutFileSystem.Fault, error: String) async throws {
        let report = try await onDedicatedThread { try ExplodeFaults(fault: fault, error: error).run() }
        print(report.summaryLine)
        for finding in report.findings { print("  finding: \(finding)") }
        #expect(report.faultedSteps > 0, "no explode met its fault")
        #expect(report.stepsBeyondExplode, "the fault index never passed the explode's own \(fault)s")
        #expect(report.findings.isEmpty, "\(report.findings.prefix(5))")
    }
}

extension StressSuite.PowerCutTests {
    @Test("Bob killed after sealing a receipt (before queueing it) and after its delivery (before deleting its notice), the power cut with it (all unsynced writes lost; the last one torn; under make stress a random half too): the receipt owed survives and is sent once, a delivered one at most once more; alice's push ends delivered and bob owes nothing")
    func receiptsSurvivePowerCut() async throws {
        let rounds = ReceiptPowerCut.plan(full: StressProfile.current.name == "full")
        let report = try await onDedicatedThread { try ReceiptPowerCut(rounds: rounds).run() }
        report.expectEveryRoundSound(rounds: rounds.count)
    }
}
