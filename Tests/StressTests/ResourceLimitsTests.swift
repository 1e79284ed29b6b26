import Foundation
import Testing
import TestSupport

/// Issue #10: the control socket under thousands of concurrent clients with systemd's
/// default fd limit. 2,500 connections here; `make stress` opens 10,000.
extension StressSuite {
@Suite("Stress: resource limits")
struct ResourceLimitsTests {
    static let maxThreads = 32
    static let maxRSSGrowthKB: Int64 = 64 * 1024

    @Test("thousands of control connections, a quarter with 250 KB unfinished lines: bounded, refused cleanly, status answers",
          arguments: [nil, 4_000])
    func controlSocketFlood(maxConnectionsOverride: Int?) async throws {
        let profile = StressProfile.current
        let report = try await onDedicatedThread {
            try ControlFlood(profile: profile, maxConnectionsOverride: maxConnectionsOverride).run()
        }
        print(report.summaryLine)

        #expect(report.daemonFileLimit == "1024 1024", "the daemon must run at the fd limit under test")
        #expect(report.daemonAliveDuring)
        #expect(report.opened == report.connections, "\(report.connectFailures) connects failed")
        // Bounded: a few threads whatever the number of clients, memory far below 2,500 × 250 KB.
        #expect(report.peakThreads <= Self.maxThreads)
        let growth = report.peakRSSKB - (report.baseline?.rssKB ?? 0)
        #expect(growth <= Self.maxRSSGrowthKB, "RSS grew \(growth) kB")
        // Every connection is served or refused with a line; never dropped without a word.
        #expect(report.held + report.refusedWithLine == report.opened)
        #expect(report.closedWithoutLine == 0)
        #expect(report.refusedWithLine >= report.opened - max(report.maxConnections, Self.fileLimitCeiling))
        #expect(report.refusalCodes == [-32003], "\(report.refusalCodes)")
        #expect(report.held <= min(report.maxConnections, Self.fileLimitCeiling))
        if maxConnectionsOverride != nil {
            #expect(report.controlDuring["fileLimitHits", default: 0] > 0, "the fd limit was never reached")
        }
        // The real CLI and a subscriber kept working; everything was given back.
        #expect(report.statusDuring == 0)
        #expect(report.newDuring == 0, "the daemon had no descriptors left for its own work")
        #expect(report.subscriberNotified)
        #expect(report.connectionsAfter == 2)
        #expect(report.openFilesAfter >= 0 && report.openFilesAfter <= (report.baseline?.openFiles ?? 0) + 16)
        #expect(report.statusAfter == 0)
        #expect(report.daemonExit == 0)
    }

    static let fileLimitCeiling = ControlFlood.fileLimit

    @Test("the daemon raises its soft open-file limit to the hard one (systemd gives 1024 soft)")
    func raisesSoftFileLimit() async throws {
        let profile = StressProfile.current
        let limits = try await onDedicatedThread { () throws -> String in
            let home = try DaemonHome()
            let environment = ProcessInfo.processInfo.environment.merging(home.environment) { $1 }
            let daemon = try LoggedProcess.launch("/usr/bin/prlimit", ["--nofile=1024:4096", try profile.executable("sotto"), "daemon"],
                                                  environment: environment)
            defer { if daemon.isRunning { daemon.signal(SIGKILL); _ = daemon.waitForExit() } }
            guard daemon.waitForLine(containing: "ready:", timeout: 60) else {
                throw StressFailure("daemon did not start: \(daemon.output.suffix(5))")
            }
            let limits = ControlFlood.fileLimitLine(pid: daemon.pid)
            daemon.signal(SIGTERM)
            _ = daemon.waitForExit()
            return limits
        }
        #expect(limits == "4096 4096")
    }
}
}
