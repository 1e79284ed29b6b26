import Foundation
import Testing

/// Issue #7 part 4: identities created and deleted under readers and real workers.
extension StressSuite {
@Suite("Stress: keystore race")
struct KeystoreRaceTests {
    @Test("Lookups racing create/delete see the right identity or .missing; workers ack ok or unknown_client; no crash")
    func lookupsNeverTear() async throws {
        let profile = StressProfile.current
        let report = try await onDedicatedThread { try KeystoreRace(profile: profile).run() }
        print(report.summaryLine)

        #expect(report.churnStatus == 0)
        #expect(report.readerStatuses.allSatisfy { $0 == 0 })
        #expect(report.found > 0, "the readers never caught a live identity: the race was not exercised")
        #expect(report.missing > 0)
        #expect(report.wrong == 0)
        #expect(report.torn == 0, "first: \(report.firstTorn ?? "-")")
        #expect(report.pushes > 0)
        #expect(report.stored + report.unknownClient == report.pushes)
        #expect(report.pushFailures.isEmpty, "\(report.pushFailures.prefix(5))")
        #expect(report.kills == 0)
    }
}
}
