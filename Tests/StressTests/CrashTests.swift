import Foundation
import Testing

/// Issue #7 part 2: SIGKILL at random points, workers and the daemon. Short profile here
/// (200 worker kills, one daemon kill); `make stress` runs 2,000 and 5.
extension StressSuite {
@Suite("Stress: crash")
struct CrashTests {
    @Test("Workers SIGKILLed at random points: file sound, no partial message, acked kept, a resend stores each push once")
    func killedWorkersLeaveNoPartialWrite() async throws {
        let profile = StressProfile.current
        let report = try await onDedicatedThread { try WorkerCrash(profile: profile).run() }
        print(report.summaryLine)

        #expect(report.harnessFailures.isEmpty, "\(report.harnessFailures.prefix(5))")
        #expect(report.killed >= profile.workerKills)
        #expect(report.killedBeforeExit > 0, "no kill landed while a worker ran: the crash was not exercised")
        #expect(report.killedCommitted < report.killed, "every kill came after the commit: none died before or inside it")
        // After the crashes: sound, and each stored message came with its change and unread increment.
        #expect(report.integrityAfterCrash == "ok")
        #expect(report.ackedLost == 0)
        #expect(report.storedAfterCrash >= report.acked)
        #expect(report.changesAfterCrash == report.storedAfterCrash)
        #expect(report.unreadAfterCrash == report.storedAfterCrash)
        // The resend: what survived is a duplicate, the rest is stored, all exactly once.
        #expect(report.resentFailures.isEmpty, "\(report.resentFailures.prefix(5))")
        #expect(report.resentDuplicate == report.storedAfterCrash)
        #expect(report.resentStored == report.workers - report.storedAfterCrash)
        #expect(report.finalStored == report.workers)
        #expect(report.finalDistinct == report.workers)
        #expect(report.finalChanges == report.workers)
        #expect(report.finalUnread == report.workers)
        #expect(report.integrity == "ok")
    }

    @Test("The daemon SIGKILLed mid-burst of sends (sendMessage, what `sotto send` calls): every reported message once, each delivered once after the restart")
    func killedDaemonLosesNothingItReported() async throws {
        let profile = StressProfile.current
        let report = try await onDedicatedThread { try DaemonCrash(profile: profile).run() }
        print(report.summaryLine)

        #expect(report.kills == profile.daemonKills)
        #expect(report.reported > 0)
        #expect(report.reportedMissing == 0)
        #expect(report.reportedTwice == 0)
        #expect(report.senderTexts >= report.reported)
        #expect(report.deliveredInTime)
        #expect(report.receiverTexts == report.senderTexts)
        #expect(report.receiverMissing == 0)
        #expect(report.receiverExtra == 0)
        #expect(report.receiverDuplicateTexts == 0)
        #expect(report.outboxNotSent == 0)
        #expect(report.integritySender == "ok")
        #expect(report.integrityReceiver == "ok")
    }
}
}
