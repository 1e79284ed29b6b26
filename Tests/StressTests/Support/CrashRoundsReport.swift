import Foundation
import Testing

/// What a run of rounds found in which a daemon is killed at a named step (ADR 0017), with a
/// power cut or without: the report of `OfflineExplodeCrash` and `ReceiptPowerCut`.
///
/// ```swift
/// var report = CrashRoundsReport(name: "receipt-power-cut")
/// print(report.summaryLine)   // STRESS receipt-power-cut: rounds=2 kills=2 notReached=0 findings=0 …
/// ```
struct CrashRoundsReport: Sendable {
    let name: String
    var rounds = 0
    var kills = 0
    var powerCuts: [String] = []
    /// Rounds whose armed step was never reached (the daemon did not die there).
    var notReached: [String] = []
    /// What broke all-or-nothing or exactly-once, one line per finding.
    var findings: [String] = []
    var seconds = 0.0

    var summaryLine: String {
        "STRESS \(name): rounds=\(rounds) kills=\(kills) notReached=\(notReached.count) "
            + "findings=\(findings.count) seconds=\(String(format: "%.1f", seconds))"
    }
}

extension CrashRoundsReport {
    /// Prints the report, then expects `rounds` rounds, every armed step reached, a power cut
    /// per kill, and no finding.
    func expectEveryRoundSound(rounds expected: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        print(summaryLine)
        for summary in powerCuts { print("  power cut: \(summary)") }
        for finding in findings { print("  finding: \(finding)") }
        #expect(rounds == expected, sourceLocation: sourceLocation)
        #expect(notReached.isEmpty, "crash points never reached: \(notReached)", sourceLocation: sourceLocation)
        #expect(powerCuts.count == kills, sourceLocation: sourceLocation)
        #expect(findings.isEmpty, "\(findings)", sourceLocation: sourceLocation)
    }
}
