import Foundation
import Testing

/// Issue #10: a daemon that has done real work must then idle quietly. The short profile
/// (one round, a 12 s window) runs in `make test`; `make stress` runs an hour of rounds
/// with idle gaps and prints the RSS curve.
extension StressSuite {
@Suite("Stress: soak")
struct SoakTests {
    /// At most 1% of one core while idle, and at most 2 MB more resident memory per window.
    static let maxIdleCPUShare = 0.01
    static let maxIdleRSSGrowthKB: Int64 = 2 * 1024
    /// Over the full profile's hour: the RSS after the last idle gap against the first.
    static let maxDriftKB: Int64 = 16 * 1024

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
            if report.rounds > 1 {
                #expect(device.lastIdleRSSKB - device.firstIdleRSSKB <= Self.maxDriftKB,
                        "\(device.name) RSS drifted \(device.lastIdleRSSKB - device.firstIdleRSSKB) kB over \(report.rounds) rounds")
            }
        }
    }
}
}
