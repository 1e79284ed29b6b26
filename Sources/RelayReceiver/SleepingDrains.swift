/// When a sleeping inbox's mailbox is next drained (docs/adr/0056). A sleeping mailbox holds
/// no relay connection; at a random moment between half the bound and the bound after its
/// last drain, it opens a connection of its own, takes what waits, and closes it again. So a
/// push to a sleeping inbox waits on the relay at most `boundMs` (plus the drain itself), and
/// no two mailboxes of the device share a schedule the relay could line up (issue #19 goal 4).
///
/// ```swift
/// let drains = SleepingDrains(boundMs: 60_000)
/// slot.connectAt = drains.next(after: now)   // in now + 30 s ... now + 60 s
/// ```
struct SleepingDrains {
    /// The longest a push to a sleeping inbox waits on the relay before relayd fetches it.
    let boundMs: Int64

    init(boundMs: Int64) {
        self.boundMs = max(2, boundMs)
    }

    // MARK: - Moments

    /// The next drain of a mailbox drained (or put to sleep) at `now`.
    func next(after now: Int64) -> Int64 {
        now + boundMs / 2 + Int64.random(in: 0...(boundMs - boundMs / 2))
    }
}
