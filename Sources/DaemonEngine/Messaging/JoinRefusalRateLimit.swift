import SottoWire

/// How many join refusals the creator's device sends (docs/protocol/join-refusal.md §6,
/// docs/adr/0061): a token bucket per conversation and one for the whole device, so a flood
/// of bad join requests cannot make it a sender of pushes at anyone's chosen endpoints. A
/// refusal takes one token from both; with either empty the request is still rejected, but
/// not answered (the daemon counts and logs it).
///
/// Per conversation: at most 10 at once, then 1 per 6 s (10 a minute). The device: at most
/// 60 at once, then 1 a second. So over any window of `t` seconds at most
/// `min(10 + t/6 per conversation, 60 + t)` refusals leave the device.
///
/// ```swift
/// var limit = JoinRefusalRateLimit()
/// limit.take(conversationId: cid, nowMs: WallClock.nowMs())   // true: send the refusal
/// ```
struct JoinRefusalRateLimit: Sendable {
    static let conversationBurst = 10
    static let conversationRefillMs: Int64 = 6_000
    static let deviceBurst = 60
    static let deviceRefillMs: Int64 = 1_000
    /// Buckets of conversations that are full again are forgotten past this many.
    static let maxTrackedConversations = 4_096

    /// A bucket as the time it is full again: no timer, no per-token state.
    private struct Bucket: Sendable {
        var fullAtMs: Int64 = 0

        /// Takes a token if one is there; `burst` tokens, one more every `refillMs`.
        mutating func take(nowMs: Int64, burst: Int, refillMs: Int64) -> Bool {
            let start = max(fullAtMs, nowMs)
            let used = (start - nowMs + refillMs - 1) / refillMs  // tokens missing now
            guard used < Int64(burst) else { return false }
            fullAtMs = start + refillMs
            return true
        }

        func wouldTake(nowMs: Int64, burst: Int, refillMs: Int64) -> Bool {
            var copy = self
            return copy.take(nowMs: nowMs, burst: burst, refillMs: refillMs)
        }
    }

    private var device = Bucket()
    private var conversations: [String: Bucket] = [:]
    /// Requests rejected without an answer because a bucket was empty, since the daemon started.
    private(set) var dropped = 0

    /// True when a refusal may go now (a token taken from both buckets); false counts a drop.
    mutating func take(conversationId: String, nowMs: Int64) -> Bool {
        var bucket = conversations[conversationId] ?? Bucket()
        guard bucket.wouldTake(nowMs: nowMs, burst: Self.conversationBurst, refillMs: Self.conversationRefillMs),
              device.take(nowMs: nowMs, burst: Self.deviceBurst, refillMs: Self.deviceRefillMs) else {
            dropped += 1
            return false
        }
        _ = bucket.take(nowMs: nowMs, burst: Self.conversationBurst, refillMs: Self.conversationRefillMs)
        conversations[conversationId] = bucket
        if conversations.count > Self.maxTrackedConversations {
            conversations = conversations.filter { $0.value.fullAtMs > nowMs }
        }
        return true
    }
}
