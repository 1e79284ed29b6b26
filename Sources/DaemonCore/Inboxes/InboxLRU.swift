import SottoWire

/// Decides which inboxes are awake (the source app's decision record "Inbox Lifecycle Management"). At most `capacity` inboxes are awake; when a
/// wake goes over capacity, the least recently active *unprotected* awake inbox is slept
/// first. Protected inboxes (open in a client, pending invite, pending join request) are
/// never evicted, are woken when protected, and are the only ones that may push the awake
/// count over capacity.
///
/// Every awake inbox holds an ``AwakeInboxResources`` built by the injected factory: the
/// inbox LRU calls `activate()` on wake and `release()` on sleep or removal. Operations that
/// change what is awake run one after another (FIFO), so resource calls for one inbox are
/// never concurrent and always alternate activate → release. Recording activity and reading
/// state never wait behind them.
///
/// Cost: `wake`, `sleep`, `recordActivity`, `setProtected`, `forceRemove` are O(log a) where
/// a is the number of awake inboxes (an indexed heap orders the evictable ones by recency);
/// `launch` is O(n log capacity) for n ranked inboxes; `rebalance` reads only the top
/// `capacity + protected` of the ranking.
///
/// ```swift
/// let inboxLRU = InboxLRU(capacity: 20, activitySource: store) { inboxId in
///     InboxSession(inboxId: inboxId)            // unlocks identity, opens store, ...
/// }
/// try await inboxLRU.launch(ranked: try await store.rankedInboxes(limit: .max),
///                          pendingInvites: ["inbox-with-invite"])
/// try await inboxLRU.wake("inbox-7", reason: .pushNotification)
/// await inboxLRU.recordActivity("inbox-7", at: WallClock.nowMs())
/// try await inboxLRU.setProtected("inbox-7", reason: .openInClient, true)
/// print(await inboxLRU.snapshot())
/// ```
public actor InboxLRU {
    // MARK: State

    /// Recency order: later activity is "greater"; ties broken by the order of touches.
    struct Recency: Comparable, Sendable {
        var lastActivityMs: Int64
        var touch: UInt64
        static func < (lhs: Recency, rhs: Recency) -> Bool {
            (lhs.lastActivityMs, lhs.touch) < (rhs.lastActivityMs, rhs.touch)
        }
    }

    private struct Entry {
        var isAwake = false
        var recency: Recency
        var protections: Set<ProtectionReason> = []
        var isProtected: Bool { !protections.isEmpty }
    }

    private typealias Handle = (inboxId: String, resources: any AwakeInboxResources)

    public private(set) var capacity: Int
    private var entries: [String: Entry] = [:]
    /// Awake and unprotected, least recently active at the top.
    private var evictable = IndexedMinHeap<String, Recency>()
    /// One per awake inbox: `resources.count` is the awake count.
    private var resources: [String: any AwakeInboxResources] = [:]
    private var protectedIds: Set<String> = []
    private var wakeCounts: [WakeReason: Int] = [:]
    private var touchCounter: UInt64 = 0
    private var gate = AsyncGate()

    private let makeResources: AwakeInboxResourcesFactory
    private let activitySource: (any InboxActivitySource)?
    private let clock: @Sendable () -> Int64

    /// - Parameters:
    ///   - capacity: most awake inboxes allowed (values below 1 are raised to 1).
    ///   - activitySource: the ranking `rebalance()` reads; without one, `rebalance()` only
    ///     enforces capacity with the activity recorded in memory.
    ///   - clock: Unix milliseconds, used as the activity time of a wake.
    ///   - makeResources: builds an inbox's resources each time it wakes.
    public init(capacity: Int = 20,
                activitySource: (any InboxActivitySource)? = nil,
                clock: @escaping @Sendable () -> Int64 = { WallClock.nowMs() },
                makeResources: @escaping AwakeInboxResourcesFactory) {
        self.capacity = Swift.max(1, capacity)
        self.activitySource = activitySource
        self.clock = clock
        self.makeResources = makeResources
    }

    // MARK: Reading

    public func state(of inboxId: String) -> InboxState {
        guard let entry = entries[inboxId] else { return .notTracked }
        return entry.isAwake ? .awake : .sleeping
    }

    public func isProtected(_ inboxId: String) -> Bool { protectedIds.contains(inboxId) }

    public var awakeCount: Int { resources.count }

    public func snapshot() -> InboxLRUSnapshot {
        let awake = resources.keys.sorted { entries[$0]!.recency > entries[$1]!.recency }
        var protectedBy: [ProtectionReason: [String]] = [:]
        for inboxId in protectedIds.sorted() {
            for reason in entries[inboxId]?.protections ?? [] { protectedBy[reason, default: []].append(inboxId) }
        }
        return InboxLRUSnapshot(
            awake: awake,
            protectedAwake: awake.filter { protectedIds.contains($0) },
            protectedBy: protectedBy,
            sleepingCount: entries.count - resources.count,
            wakesByReason: wakeCounts,
            capacity: capacity)
    }

    // MARK: Operations

    /// Wakes `inboxId` (tracking it if it was unknown) and records activity now. Over capacity,
    /// the least recently active unprotected awake inboxes are slept, and released before this
    /// inbox's resources are activated.
    @discardableResult
    public func wake(_ inboxId: String, reason: WakeReason) async throws -> WakeOutcome {
        await enterGate()
        defer { leaveGate() }
        track(inboxId, lastActivityMs: clock())
        touch(inboxId, at: clock())
        guard let entry = entries[inboxId], !entry.isAwake else { return .alreadyAwake }
        if !entry.isProtected, resources.count >= capacity, evictable.isEmpty { return .noRoom }
        let activation = markAwake(inboxId, reason: reason)
        let evicted = evictOverCapacity(sparing: inboxId)
        let failures = await perform(releases: evicted, activations: [activation])
        if let failure = failures.first { throw failure }
        return .woke(evicted: evicted.map(\.inboxId))
    }

    /// Sleeps an awake, unprotected inbox and releases its resources. Returns false (and does
    /// nothing) when the inbox is not awake or is protected: unprotect it first.
    @discardableResult
    public func sleep(_ inboxId: String) async -> Bool {
        await enterGate()
        defer { leaveGate() }
        guard let entry = entries[inboxId], entry.isAwake, !entry.isProtected,
              let handle = markSleeping(inboxId) else { return false }
        _ = await perform(releases: [handle], activations: [])
        return true
    }

    /// Records that something happened in `inboxId` at `at` (Unix ms). Never moves recency
    /// backwards. An unknown inbox becomes tracked (sleeping). Does not wake anything.
    public func recordActivity(_ inboxId: String, at: Int64) {
        track(inboxId, lastActivityMs: at)
        touch(inboxId, at: at)
    }

    /// Adds or removes one protection reason. Protecting a sleeping inbox wakes it; removing
    /// the last reason makes it evictable again and sleeps the least recently active
    /// unprotected inboxes if the awake count is over capacity.
    public func setProtected(_ inboxId: String, reason: ProtectionReason, _ isOn: Bool) async throws {
        await enterGate()
        defer { leaveGate() }
        if isOn {
            track(inboxId, lastActivityMs: clock())
            guard var entry = entries[inboxId] else { return }
            entry.protections.insert(reason)
            entries[inboxId] = entry
            protectedIds.insert(inboxId)
            if entry.isAwake {
                evictable.remove(inboxId)
                return
            }
            let activation = markAwake(inboxId, reason: Self.wakeReason(forProtection: entry.protections))
            let failures = await perform(releases: evictOverCapacity(sparing: nil), activations: [activation])
            if let failure = failures.first { throw failure }
        } else {
            guard var entry = entries[inboxId], entry.protections.contains(reason) else { return }
            entry.protections.remove(reason)
            entries[inboxId] = entry
            guard !entry.isProtected else { return }
            protectedIds.remove(inboxId)
            if entry.isAwake { evictable.upsert(inboxId, priority: entry.recency) }
            _ = await perform(releases: evictOverCapacity(sparing: nil), activations: [])
        }
    }

    /// Brings the awake set in line with the activity ranking: every protected inbox awake,
    /// then the most active unprotected ones in the remaining slots (woken with reason
    /// `.activityRanking`), the rest sleeping. Ranking timestamps never move recency backwards.
    public func rebalance() async throws {
        await enterGate()
        defer { leaveGate() }
        var ranked: [InboxActivity] = []
        if let activitySource {
            let limit = capacity + protectedIds.count
            do {
                ranked = Array(try await activitySource.rankedInboxes(limit: limit).prefix(limit))
            } catch {
                throw InboxLRUError.rankingUnavailable(errorType: String(describing: type(of: error)))
            }
        }
        let failures = await reconcile(ranked: ranked, reason: .activityRanking)
        if let failure = failures.first { throw failure }
    }

    /// Start-up: tracks every ranked inbox (most active first), protects and wakes the ones
    /// with a pending invite or join request first (reason `.pendingInvite`), then wakes the
    /// most active up to capacity (reason `.appLaunch`); the rest sleep. Activations run
    /// concurrently; if some fail, those inboxes stay sleeping and the first failure is thrown.
    public func launch(ranked: [InboxActivity], pendingInvites: Set<String>) async throws {
        await enterGate()
        defer { leaveGate() }
        let now = clock()
        for inboxId in pendingInvites.sorted() {
            track(inboxId, lastActivityMs: now)
            entries[inboxId]?.protections.insert(.pendingInvite)
            protectedIds.insert(inboxId)
            evictable.remove(inboxId)
        }
        let failures = await reconcile(ranked: ranked, reason: .appLaunch)
        if let failure = failures.first { throw failure }
    }

    /// Forgets an inbox entirely (deleted or exploded conversation), releasing its resources
    /// if it was awake, whatever its protections. Returns false if it was not tracked.
    @discardableResult
    public func forceRemove(_ inboxId: String) async -> Bool {
        await enterGate()
        defer { leaveGate() }
        guard entries[inboxId] != nil else { return false }
        let handle = markSleeping(inboxId)
        entries[inboxId] = nil
        protectedIds.remove(inboxId)
        if let handle { _ = await perform(releases: [handle], activations: []) }
        return true
    }

    /// Changes the capacity and sleeps the least recently active unprotected inboxes if the
    /// awake count is now over it. Does not wake anything: call `rebalance()` to fill slots.
    public func setCapacity(_ newCapacity: Int) async throws {
        guard newCapacity >= 1 else { throw InboxLRUError.invalidCapacity(newCapacity) }
        await enterGate()
        defer { leaveGate() }
        capacity = newCapacity
        _ = await perform(releases: evictOverCapacity(sparing: nil), activations: [])
    }

    // MARK: State transitions (synchronous: state is consistent at every await)

    /// Starts tracking an unknown inbox as sleeping; returns false if it was already tracked.
    @discardableResult
    private func track(_ inboxId: String, lastActivityMs: Int64) -> Bool {
        guard entries[inboxId] == nil else { return false }
        touchCounter += 1
        entries[inboxId] = Entry(recency: Recency(lastActivityMs: lastActivityMs, touch: touchCounter))
        return true
    }

    private func touch(_ inboxId: String, at ms: Int64) {
        guard var entry = entries[inboxId], ms >= entry.recency.lastActivityMs else { return }
        touchCounter += 1
        entry.recency = Recency(lastActivityMs: ms, touch: touchCounter)
        entries[inboxId] = entry
        if evictable.contains(inboxId) { evictable.upsert(inboxId, priority: entry.recency) }
    }

    private func markAwake(_ inboxId: String, reason: WakeReason) -> Handle {
        let handle = makeResources(inboxId)
        entries[inboxId]!.isAwake = true
        resources[inboxId] = handle
        if let entry = entries[inboxId], !entry.isProtected {
            evictable.upsert(inboxId, priority: entry.recency)
        }
        wakeCounts[reason, default: 0] += 1
        return (inboxId, handle)
    }

    private func markSleeping(_ inboxId: String) -> Handle? {
        guard let handle = resources.removeValue(forKey: inboxId) else { return nil }
        entries[inboxId]?.isAwake = false
        evictable.remove(inboxId)
        return (inboxId, handle)
    }

    /// Pops least recently active unprotected inboxes until the awake count fits, or only
    /// protected ones (and `sparing`, the inbox being woken) remain.
    private func evictOverCapacity(sparing: String?) -> [Handle] {
        var released: [Handle] = []
        var spared: (key: String, priority: Recency)?
        while resources.count > capacity, let victim = evictable.popMin() {
            if victim.key == sparing {
                spared = victim
                continue
            }
            if let handle = markSleeping(victim.key) { released.append(handle) }
        }
        if let spared { evictable.upsert(spared.key, priority: spared.priority) }
        return released
    }

    /// Merges `ranked` into the recency records, then computes and applies the awake set:
    /// all protected, then the most recent unprotected up to capacity.
    private func reconcile(ranked: [InboxActivity], reason: WakeReason) async -> [InboxLRUError] {
        // Reverse order so that, on equal timestamps, a higher rank gets the later touch.
        entries.reserveCapacity(entries.count + ranked.count)
        for item in ranked.reversed() where !track(item.inboxId, lastActivityMs: item.lastActivityMs) {
            touch(item.inboxId, at: item.lastActivityMs)
        }
        var activations: [Handle] = []
        for inboxId in protectedIds.sorted() where entries[inboxId]?.isAwake == false {
            let protections = entries[inboxId]!.protections
            activations.append(markAwake(inboxId, reason: Self.wakeReason(forProtection: protections)))
        }

        let slots = Swift.max(0, capacity - (resources.count - evictable.count))
        var top = IndexedMinHeap<String, Recency>()   // the `slots` most recent candidates
        if slots > 0 {
            for inboxId in Array(resources.keys) + ranked.map(\.inboxId) {
                guard let entry = entries[inboxId], !entry.isProtected, !top.contains(inboxId) else { continue }
                if top.count < slots {
                    top.upsert(inboxId, priority: entry.recency)
                } else if let least = top.min, least.priority < entry.recency {
                    top.popMin()
                    top.upsert(inboxId, priority: entry.recency)
                }
            }
        }

        var releases: [Handle] = []
        for inboxId in Array(resources.keys) where !protectedIds.contains(inboxId) && !top.contains(inboxId) {
            if let handle = markSleeping(inboxId) { releases.append(handle) }
        }
        var toWake: [(key: String, priority: Recency)] = []
        while let next = top.popMin() { toWake.append(next) }
        for candidate in toWake.reversed() where entries[candidate.key]?.isAwake == false {
            activations.append(markAwake(candidate.key, reason: reason))
        }
        return await perform(releases: releases, activations: activations)
    }

    private static func wakeReason(forProtection protections: Set<ProtectionReason>) -> WakeReason {
        protections.contains(.pendingInvite) || protections.contains(.pendingJoinRequest)
            ? .pendingInvite : .userInteraction
    }

    // MARK: Effects

    /// Releases first (freeing resources before taking new ones), then activates concurrently.
    /// A failed activation puts that inbox back to sleep and releases what it half-built.
    private func perform(releases: [Handle], activations: [Handle]) async -> [InboxLRUError] {
        await withTaskGroup(of: Void.self) { group in
            for handle in releases { group.addTask { await handle.resources.release() } }
        }
        let failed = await withTaskGroup(of: (String, String?).self) { group in
            for handle in activations {
                group.addTask {
                    do {
                        try await handle.resources.activate()
                        return (handle.inboxId, nil)
                    } catch {
                        return (handle.inboxId, String(describing: type(of: error)))
                    }
                }
            }
            var failed: [(String, String)] = []
            for await (inboxId, errorType) in group {
                if let errorType { failed.append((inboxId, errorType)) }
            }
            return failed
        }
        var errors: [InboxLRUError] = []
        for (inboxId, errorType) in failed.sorted(by: { $0.0 < $1.0 }) {
            if let handle = markSleeping(inboxId) { await handle.resources.release() }
            errors.append(.activationFailed(inboxId: inboxId, errorType: errorType))
        }
        return errors
    }

    // MARK: Serialising operations

    private func enterGate() async {
        if gate.tryAcquire() { return }
        await withCheckedContinuation { gate.enqueue($0) }
    }

    private func leaveGate() { gate.release() }
}
