import Foundation
import Testing

/// Issue #10: a daemon that has done real work must then idle quietly. The short profile
/// (8 rounds, then a 12 s idle window) runs in `make test`; `make stress` runs an hour of rounds
/// with idle gaps and prints the RSS curve. Both assert the slope of issue #21: private
/// memory flat within 1 MB over the second half of the rounds, by the least-squares line
/// through its samples and by its two end points.
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
            let fit = device.secondHalfAnonFit
            #expect(fit.growthKB <= Double(Self.maxSecondHalfAnonGrowthKB),
                    "\(device.name) RssAnon's fitted line rose \(Int(fit.growthKB)) kB (\(fit.slopeKBPerRound) kB a round) over the second half of \(report.rounds) rounds")
            #expect(device.secondHalfAnonGrowthKB <= Self.maxSecondHalfAnonGrowthKB,
                    "\(device.name) RssAnon grew \(device.secondHalfAnonGrowthKB) kB over the second half of \(report.rounds) rounds")
        }
    }

    @Test("the soak's fitted slope sees a steady leak of 300 kB a round, and not one late page fault")
    func fittedSlopeDecides() {
        var leaking = Soak.DeviceFigures()
        leaking.parts = (0..<8).map { (40_000 + Int64($0) * 300, 20_000) }
        #expect(leaking.secondHalfAnonFit.growthKB > Double(Self.maxSecondHalfAnonGrowthKB))
        #expect(abs(leaking.secondHalfAnonFit.slopeKBPerRound - 300) < 0.001)
        var flat = Soak.DeviceFigures()
        flat.parts = [40_000, 40_100, 40_050, 40_000, 40_020, 39_990, 40_010, 41_000].map { ($0, 20_000) }
        #expect(flat.secondHalfAnonFit.growthKB <= Double(Self.maxSecondHalfAnonGrowthKB))
    }
}
}
