import Foundation
import SottoWire
import TestSupport
import Testing

extension DaemonProcessTests {
    /// Issue #10, defect 8: a duration or time too far ahead (up to one that overflowed
    /// Int64 and trapped with exit 132) is a usage error naming the limit, and changes nothing.
    @Suite("CLI: explosion and invite time limits")
    struct TimeLimits {
        @Test("--in and --at beyond 3650 days, and overflowing durations, exit 64 with the limit; the daemon refuses the same")
        func tooFarAheadIsAUsageError() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }
            let id = try #require(try daemon.result("newConversation")["conversationId"] as? String)

            for duration in ["106751991167d", "200000000d", "3651d", "9223372036854775807ms", "99999999999h"] {
                let result = try runCLI(["explode", id, "--in", duration], home: home)
                #expect(result.status == 64, "--in \(duration): exit \(result.status) \(result.stderr)")
                #expect(result.stderr.contains("3650d (10 years)"), "--in \(duration): \(result.stderr)")
            }
            let farAt = try runCLI(["explode", id, "--at", "9999-12-31T23:59:59Z"], home: home)
            #expect(farAt.status == 64)
            #expect(farAt.stderr.contains("3650d (10 years)"), "\(farAt.stderr)")
            let invite = try runCLI(["invite", id, "--expires", "106751991167d"], home: home)
            #expect(invite.status == 64)
            #expect(invite.stderr.contains("3650d (10 years)"), "\(invite.stderr)")

            // The daemon applies the same limit to whatever a client sends.
            let elevenYears = WallClock.nowMs() + 11 * 365 * 86_400_000
            let refused = try daemon.call("explode", ["conversation": id, "atMs": elevenYears])
            let message = (refused["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains("at most 3650d (10 years)"), "\(refused)")

            // Nothing changed; the limit itself is accepted.
            let listed = try #require(try daemon.result("listConversations")["conversations"] as? [[String: Any]])
            #expect(listed.count == 1 && listed[0]["expiresAtMs"] == nil, "\(listed)")
            let inLimit = try runCLI(["explode", id, "--in", "3650d", "--json"], home: home)
            #expect(inLimit.status == 0, "\(inLimit.stderr)")
            #expect(try jsonObject(inLimit.stdout)["deleted"] as? Bool == false)
            let human = try runCLI(["explode", id, "--in", "1h"], home: home)
            #expect(human.status == 0 && human.stdout.contains("will explode at")
                    && human.stdout.contains("told 0 member(s), 0 not reached yet"), "\(human)")
        }
    }
}
