@testable import DaemonEngine
import Testing

/// The two buckets of docs/protocol/join-refusal.md §6 on a clock the test moves: per
/// conversation 10 at once then 1 per 6 s, per device 60 at once then 1 a second. (The real
/// flood through a daemon is `JoinRefusalFloodTests`; a flood fast enough to drain the device
/// bucket needs more than the shared test machine gives, so its arithmetic is checked here.)
@Suite("Join refusal rate bound")
struct JoinRefusalRateLimitTests {
    /// How many of `tries` refusals for `conversation` at `nowMs` may go.
    static func allowed(_ limit: inout JoinRefusalRateLimit, _ conversation: String, at nowMs: Int64, tries: Int = 1) -> Int {
        var sent = 0
        for _ in 0..<tries where limit.take(conversationId: conversation, nowMs: nowMs) { sent += 1 }
        return sent
    }

    @Test("per conversation: 10 at once, then one per 6 s; other conversations have their own")
    func perConversation() {
        var limit = JoinRefusalRateLimit()
        let t0: Int64 = 1_000_000
        #expect(Self.allowed(&limit, "a", at: t0, tries: 25) == 10)
        #expect(limit.dropped == 15)
        #expect(Self.allowed(&limit, "a", at: t0 + 5_999) == 0)
        #expect(Self.allowed(&limit, "a", at: t0 + 6_000, tries: 2) == 1)
        #expect(Self.allowed(&limit, "b", at: t0 + 6_000, tries: 12) == 10)
        // Two minutes of quiet refill it: 10 again, not more.
        #expect(Self.allowed(&limit, "a", at: t0 + 120_000, tries: 25) == 10)
    }

    @Test("per device: 60 at once across conversations, then one a second, whatever the conversation")
    func perDevice() {
        var limit = JoinRefusalRateLimit()
        let t0: Int64 = 1_000_000
        let burst = (0..<10).map { Self.allowed(&limit, "c\($0)", at: t0, tries: 10) }.reduce(0, +)
        #expect(burst == 60)
        #expect(Self.allowed(&limit, "fresh", at: t0 + 999) == 0)
        #expect(Self.allowed(&limit, "fresh", at: t0 + 1_000, tries: 3) == 1)
        // 30 s more of a flood over fresh conversations: one a second.
        var later = 0
        for ms in stride(from: Int64(1_100), through: 31_000, by: 100) { later += Self.allowed(&limit, "f\(ms)", at: t0 + ms) }
        #expect(later == 30)
    }
}
