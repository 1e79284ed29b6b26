import Testing

/// Issue #22 §1: an explode reaches a member who is offline on a direct endpoint even when
/// the sender's daemon is SIGKILLed at each named step of the explode and of the notice's
/// delivery (docs/adr/0034).
extension StressSuite {
@Suite("Stress: explode to an offline member, killed at each step")
struct OfflineExplodeCrashTests {
    @Test("Killed at each named step while the member is offline: the push survives in the outbox or the notice queue (never neither), the member deletes the conversation when back, and the sender ends with nothing")
    func explodeReachesOfflineMemberAcrossKills() async throws {
        let report = try await onDedicatedThread { try OfflineExplodeCrash().run() }
        print(report.summaryLine)
        for finding in report.findings { print("  finding: \(finding)") }
        #expect(report.rounds == OfflineExplodeCrash.points.count)
        #expect(report.notReached.isEmpty, "crash points never reached: \(report.notReached)")
        #expect(report.kills == report.rounds)
        #expect(report.findings.isEmpty, "\(report.findings)")
    }
}
}
