import Foundation
import Testing

/// Issue #10: a daemon that has done real work must then idle quietly. The short profile
/// (8 rounds, then a 12 s idle window) runs in `make test`; `make stress` runs an hour of rounds
/// with idle gaps and prints the RSS curve. Both assert the slope of issue #21: private
/// memory flat within 1 MB over the second half of the rounds.
extension StressSuite {
@Suite("Stress: soak")
struct SoakTests {
    /// At most 1% of one core while idle, and at most 2 MB more resident memory per window.
    static let maxIdleCPUShare = 0.01
    static let maxIdleRSSGrowthKB: Int64 = 2 * 1024
    /// Over the second half of the rounds, in both profiles: private memory flat within 1 MB
    /// (issue #21; docs/adr/0050 bounds what grows with use: the timeline window and SQLite's
    /// page caches).
    static let maxSecondHalfAnonGrowthKB: Int64 = 1024

    @Test("after sends, receives, a reaction and an explode, both daemons idle at ≤ 1% CPU with flat RSS")
    func idleDaemonsStayQuiet() async throws {
        let profile = StressProfile.current
        let report = try await onDedicatedThread { try Soak(profile: profile).run() }
        print(report.summaryLine)
        for line in report.curveLines { print(line) }

        #expect(report.devices.count == 2)
        #expect(report.exploded == report.rounds)
        for device in report.devices {
            #expect(device.lastIdleRSSKB > 0 && device.threads > 0, "\(device.name): no figures from /proc")
            #expect(device.idleCPUShare <= Self.maxIdleCPUShare,
                    "\(device.name) used \(device.idleCPUTicks) ticks in \(device.idleSeconds) s idle")
            #expect(device.idleRSSGrowthKB <= Self.maxIdleRSSGrowthKB, "\(device.name) RSS grew \(device.idleRSSGrowthKB) kB idle")
            #expect(device.parts.count == report.rounds && report.rounds >= 4, "\(device.name): a sample per round")
            #expect(device.secondHalfAnonGrowthKB <= Self.maxSecondHalfAnonGrowthKB,
                    "\(device.name) RssAnon grew \(device.secondHalfAnonGrowthKB) kB over the second half of \(report.rounds) rounds")
        }
    }
}
}
