/// A point-in-time view of the inbox LRU, for `sotto status`.
///
/// ```swift
/// let snap = await inboxLRU.snapshot()
/// print("\(snap.awake.count)/\(snap.capacity) awake, \(snap.sleepingCount) sleeping")
/// ```
public struct InboxLRUSnapshot: Sendable, Hashable, Codable {
    /// Awake inboxes, most recently active first.
    public var awake: [String]
    /// The awake inboxes that are protected (a subset of `awake`).
    public var protectedAwake: [String]
    /// The inboxes protected for each reason, sorted; an inbox may have several.
    public var protectedBy: [ProtectionReason: [String]]
    public var sleepingCount: Int
    /// How many wakes happened per reason since the inbox LRU started.
    public var wakesByReason: [WakeReason: Int]
    public var capacity: Int

    public init(awake: [String], protectedAwake: [String], protectedBy: [ProtectionReason: [String]] = [:],
                sleepingCount: Int, wakesByReason: [WakeReason: Int], capacity: Int) {
        self.awake = awake
        self.protectedAwake = protectedAwake
        self.protectedBy = protectedBy
        self.sleepingCount = sleepingCount
        self.wakesByReason = wakesByReason
        self.capacity = capacity
    }
}
