import RelayTransport

/// When each identity's connection first opens (issue #19 goal 4, docs/adr/0044). The relay
/// shows when every connection started (`/connz`); relayd's identities opened together at its
/// start, within milliseconds, and that tied them to one device. Now the first connection asked
/// for in a window of `windowMs` opens at once (a conversation made alone is not delayed) and
/// each other one at a random moment of its own within the window, like a reconnect
/// (`RelayConnection.Options.identityReconnectJitterMs`). relayd cannot tell a mailbox that
/// holds a push from an empty one without opening it, so none is favoured.
///
/// ```swift
/// var spread = ConnectSpread()
/// slot.connectAt = spread.moment(after: now)   // now, or now + a random part of 5 s
/// ```
struct ConnectSpread {
    let windowMs: Int64
    /// The latest moment given out so far.
    private var latest: Int64?

    init(windowMs: Int64 = RelayConnection.Options.identityReconnectJitterMs) {
        self.windowMs = windowMs
    }

    // MARK: - Moments

    /// A moment, not before `base`, for one identity's first connection: `base` itself when no
    /// other connection was given a moment within `windowMs` before it, else a random one in
    /// `base...base + windowMs`.
    mutating func moment(after base: Int64) -> Int64 {
        let at: Int64
        if let latest, base - latest < windowMs {
            at = base + Int64.random(in: 0...max(0, windowMs))
        } else {
            at = base
        }
        latest = max(latest ?? at, at)
        return at
    }
}
