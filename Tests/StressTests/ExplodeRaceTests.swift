import Foundation
import Testing

/// Issue #7 part 3: a conversation exploded while pushes for it are in flight.
extension StressSuite {
@Suite("Stress: explode race")
struct ExplodeRaceTests {
    @Test("Explode with pushes in flight: no row, identity or plaintext left; later pushes refused, never resurrect it")
    func explodeUnderPushesLeavesNothing() async throws {
        let profile = StressProfile.current
        let report = try await onDedicatedThread { try ExplodeRace(profile: profile).run() }
        print(report.summaryLine)

        // The race was real: texts stored first (their rows on disk, the conversation id in
        // clear, the texts sealed: docs/adr/0052), then the explosion.
        #expect(report.storedFirst == ExplodeRace.storedFirst)
        #expect(report.idBefore, "the search cannot fail if nothing was on disk")
        #expect(!report.plaintextBefore, "a stored text is sealed")
        #expect(report.explodeAck.contains("\"ok\""), "\(report.explodeAck)")
        #expect(report.deletedMs >= 0)
        // Acks: ok or expired before the deletion; only unknown_client/unknown_conversation after it.
        #expect(report.unexpected.isEmpty, "\(report.unexpected.prefix(5))")
        #expect(report.acceptedAfter == 0)
        #expect(report.refusedAfter >= 5)
        // Nothing of the conversation is left, and nothing came back.
        #expect(report.leftoverRows.values.allSatisfy { $0 == 0 }, "\(report.leftoverRows)")
        #expect(report.conversationsLeft == 0)
        #expect(report.inboxLeft == 0)
        #expect(!report.identityLeft)
        #expect(report.plaintextFiles.isEmpty, "marker found in \(report.plaintextFiles)")
        #expect(report.idInFiles.isEmpty, "conversation id found in \(report.idInFiles)")
        #expect(report.integrity == "ok")
        #expect(report.daemonExit == 0)
    }
}
}
