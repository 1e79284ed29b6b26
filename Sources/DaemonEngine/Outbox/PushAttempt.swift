import SharedStore

/// What one delivery attempt of a sealed push came to, whichever queue it came from (the
/// outbox, or the notices that outlive their conversation, docs/adr/0034), with the outbox's
/// backoff: 1 s doubling to 5 min.
///
/// ```swift
/// switch await outbox.attempt(PushAttempt.Push(endpoint: e, clientId: c, payload: p, body: nil, attempts: 3, sender: s)) {
/// case .sent, .relayed: … done …
/// case .retry(let at, let reason): … try again at `at` …
/// case .failed(let reason): … nothing a retry could fix …
/// }
/// ```
enum PushAttempt: Equatable, Sendable {
    /// Acked by the member's device (a direct endpoint).
    case sent
    /// Stored by the member's relay (docs/adr/0028).
    case relayed
    /// Unreachable, or a retryable refusal: try again at `at`.
    case retry(at: Int64, reason: String)
    /// Refused for good, or an endpoint that can never work.
    case failed(reason: String)

    static let firstRetryMs: Int64 = 1_000
    static let maxRetryMs: Int64 = 300_000

    /// One push as both queues hold it, with the address it was sealed to: neither queue
    /// decodes its own push to find it (issue #33).
    struct Push: Sendable {
        let endpoint: String
        /// The member's mailbox id, as the push names it (`sotto.mb.<clientId>` on a relay).
        /// Nil only for an outbox row from before schema v13 whose payload did not decode: it
        /// can go to a device as it is, never to a relay.
        let clientId: String?
        let payload: [UInt8]
        /// The sealed body the push references (docs/protocol/bodies.md), if any.
        let body: Body?
        /// Attempts made so far: the backoff doubles with each.
        let attempts: Int64
        /// Whose relay connection it goes out on (docs/adr/0044).
        let sender: RelaySender
    }

    /// A sealed body and the id the push names it by (`notificationData.body.id`).
    struct Body: Sendable, Equatable {
        let id: String
        let sealed: [UInt8]
    }

    /// When the next attempt of a push that has been tried `attempts` times is due.
    static func backoffMs(afterAttempts attempts: Int64) -> Int64 {
        min(firstRetryMs << min(max(attempts, 0), 20), maxRetryMs)
    }

    var isDelivered: Bool { self == .sent || self == .relayed }
}
