/// When a sleeping inbox's mailbox is next drained (docs/adr/0056). A sleeping mailbox holds
/// no relay connection; at a random moment between half its period and its period after its
/// last drain, it opens a connection of its own, takes what waits, and closes it again. So
/// no two mailboxes of the device share a schedule the relay could line up (issue #19 goal 4),
/// and a push to a sleeping inbox waits on the relay at most one period (plus the drain).
///
/// The period is the bound (`--sleeping-drain-ms`, 60 s) until the drains would come more
/// often than `maxPerSecond` on average: each costs relayd a connection's set-up (measured in
/// docs/adr/0056), so beyond `0.75 × bound × maxPerSecond` sleeping mailboxes the period grows
/// with their number and relayd's idle CPU stays flat.
///
/// ```swift
/// let drains = SleepingDrains(boundMs: 60_000)
/// slot.connectAt = drains.next(after: now, sleepingCount: 40)   // in now + 30 s ... now + 60 s
/// ```
struct SleepingDrains {
    /// The longest a push to a sleeping inbox waits on the relay while the device has few.
    let boundMs: Int64
    /// Drains per second, on average, that relayd allows itself.
    let maxPerSecond: Double

    init(boundMs: Int64, maxPerSecond: Double = 2) {
        self.boundMs = max(2, boundMs)
        self.maxPerSecond = maxPerSecond
    }

    // MARK: - Moments

    /// How long a push to one of `sleepingCount` sleeping mailboxes may wait: the bound, or
    /// longer when that many drains per bound would exceed `maxPerSecond` (a drain comes on
    /// average after three quarters of the period).
    func periodMs(sleepingCount: Int) -> Int64 {
        max(boundMs, Int64((Double(sleepingCount) / (0.75 * maxPerSecond) * 1_000).rounded(.up)))
    }

    /// The next drain of a mailbox drained (or put to sleep) at `now`.
    func next(after now: Int64, sleepingCount: Int) -> Int64 {
        let period = periodMs(sleepingCount: sleepingCount)
        return now + period / 2 + Int64.random(in: 0...(period - period / 2))
    }
}
