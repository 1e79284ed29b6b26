import Foundation
import Testing

/// Issue #10: SIGKILL at named steps (and random moments) of explode, join acceptance and
/// send. Short profile here (each step once, 2 random kills); `make stress` runs each step
/// three times and 20 random kills.
extension StressSuite {
@Suite("Stress: crash atomicity")
struct CrashAtomicityTests {
    @Test("Killed mid-explode, mid-join-acceptance, mid-send: after the restart each is all or nothing across database and keystore, and bob gets what he is owed once")
    func everyOperationIsAllOrNothing() async throws {
        let profile = StressProfile.current
        let report = try await onDedicatedThread { try CrashAtomicity(profile: profile).run() }
        print(report.summaryLine)
        for finding in report.findings { print("  finding: \(finding)") }

        #expect(report.notReached.isEmpty, "crash points never reached: \(report.notReached)")
        #expect(report.namedKills == report.rounds - report.randomKills)
        #expect(report.findings.isEmpty, "\(report.findings)")
    }
}
}
