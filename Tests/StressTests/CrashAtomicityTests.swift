import Foundation
import Testing

/// Issue #10: SIGKILL at named steps (`SOTTO_CRASH_AT`, ADR 0017) and random moments of
/// explode, join acceptance and send, then a restart. Short profile here (each explode step
/// once; two steps of join; two steps of send; one random kill of each);
/// `make stress` runs every step three times and 20 random kills of each.
extension StressSuite {
@Suite("Stress: crash atomicity")
struct CrashAtomicityTests {
    @Test("Killed mid-explode: after the restart the conversation is whole or gone on database and keystore alike, and never decrypts once its rows are gone")
    func explodeIsAllOrNothing() async throws {
        try await check(.explode)
    }

    @Test("Killed while the creator accepts a join, at a named step or a random moment: after the restart the joiner is a member, told by one membership")
    func joinAcceptanceIsAllOrNothing() async throws {
        try await check(.join)
    }

    @Test("Killed mid-send, at a named step or a random moment: after the restart the message is stored with its pushes or not at all (stored if the CLI reported it), and the member gets it once")
    func sendIsAllOrNothing() async throws {
        try await check(.send)
    }

    private func check(_ operation: CrashAtomicity.Operation) async throws {
        let profile = StressProfile.current
        let report = try await onDedicatedThread { try CrashAtomicity(profile: profile, operation: operation).run() }
        print(report.summaryLine)
        for finding in report.findings { print("  finding: \(finding)") }

        #expect(report.rounds > 0)
        #expect(report.notReached.isEmpty, "crash points never reached: \(report.notReached)")
        #expect(report.namedKills == report.rounds - report.randomKills)
        #expect(report.findings.isEmpty, "\(report.findings)")
    }
}
}
