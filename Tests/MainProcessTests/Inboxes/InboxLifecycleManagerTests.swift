@testable import DaemonCore
import Testing
@testable import SottoDaemon

@Suite("InboxLRU")
struct InboxLifecycleManagerTests {
    // MARK: Eviction

    @Test func evictsLeastRecentlyActiveFirst() async throws {
        let manager = makeManager(capacity: 3)
        for id in ["a", "b", "c"] { try await manager.wake(id, reason: .userInteraction) }
        await manager.recordActivity("a", at: 10_000)          // a is now the most recent
        let first = try await manager.wake("d", reason: .pushNotification)
        #expect(first == .woke(evicted: ["b"]))
        let second = try await manager.wake("e", reason: .pushNotification)
        #expect(second == .woke(evicted: ["c"]))
        #expect(await manager.snapshot().awake == ["a", "e", "d"])
        #expect(await manager.state(of: "b") == .sleeping)
        #expect(await manager.state(of: "zzz") == .notTracked)
    }

    @Test func activityNeverMovesBackwards() async throws {
        let manager = makeManager(capacity: 2)
        try await manager.wake("a", reason: .userInteraction)
        try await manager.wake("b", reason: .userInteraction)
        await manager.recordActivity("a", at: 50_000)
        await manager.recordActivity("a", at: 1)               // stale report is ignored
        #expect(try await manager.wake("c", reason: .userInteraction) == .woke(evicted: ["b"]))
    }

    // MARK: Protection

    @Test func protectedInboxIsNeverEvicted() async throws {
        let manager = makeManager(capacity: 2)
        try await manager.wake("a", reason: .userInteraction)
        try await manager.wake("b", reason: .userInteraction)
        try await manager.setProtected("a", reason: .openInClient, true)   // a is the oldest
        #expect(try await manager.wake("c", reason: .pushNotification) == .woke(evicted: ["b"]))
        #expect(try await manager.wake("d", reason: .pushNotification) == .woke(evicted: ["c"]))
        #expect(await manager.state(of: "a") == .awake)
        #expect(await manager.sleep("a") == false)
        #expect(await manager.state(of: "a") == .awake)
    }

    @Test func protectingASleepingInboxWakesIt() async throws {
        let log = ResourceLog()
        let manager = makeManager(capacity: 2, log: log)
        await manager.recordActivity("x", at: 5)
        #expect(await manager.state(of: "x") == .sleeping)
        try await manager.setProtected("x", reason: .pendingJoinRequest, true)
        #expect(await manager.state(of: "x") == .awake)
        #expect(log.activated() == ["x"])
        #expect(await manager.snapshot().wakesByReason == [.pendingInvite: 1])
    }

    @Test func onlyProtectedInboxesExceedCapacity() async throws {
        let manager = makeManager(capacity: 2)
        try await manager.wake("u1", reason: .userInteraction)
        try await manager.setProtected("p1", reason: .openInClient, true)
        try await manager.setProtected("p2", reason: .pendingInvite, true)
        #expect(await manager.state(of: "u1") == .sleeping)         // made room for p2
        try await manager.setProtected("p3", reason: .pendingJoinRequest, true)
        #expect(await manager.awakeCount == 3)                      // over capacity, all protected
        #expect(try await manager.wake("u2", reason: .pushNotification) == .noRoom)
        #expect(await manager.state(of: "u2") == .sleeping)
        #expect(await manager.snapshot().protectedAwake.sorted() == ["p1", "p2", "p3"])
    }

    @Test func unprotectingSleepsDownToCapacity() async throws {
        let log = ResourceLog()
        let manager = makeManager(capacity: 2, log: log)
        for id in ["p1", "p2", "p3"] { try await manager.setProtected(id, reason: .openInClient, true) }
        // p1 keeps a second reason: still protected after losing the first.
        try await manager.setProtected("p1", reason: .pendingInvite, true)
        try await manager.setProtected("p1", reason: .openInClient, false)
        #expect(await manager.awakeCount == 3)
        try await manager.setProtected("p2", reason: .openInClient, false)
        #expect(await manager.state(of: "p2") == .sleeping)
        #expect(await manager.awakeCount == 2)
        #expect(log.released() == ["p2"])
        // Now capacity is met by p1 and p3; unprotecting p3 keeps it awake (within capacity).
        try await manager.setProtected("p3", reason: .openInClient, false)
        #expect(await manager.state(of: "p3") == .awake)
        #expect(try await manager.wake("n", reason: .pushNotification) == .woke(evicted: ["p3"]))
    }

    // MARK: Rebalance and launch

    @Test func launchWakesInvitesFirstThenMostActive() async throws {
        let log = ResourceLog()
        let ranked = (1...6).map { InboxActivity(inboxId: "r\($0)", lastActivityMs: Int64(100 - $0)) }
        let manager = makeManager(capacity: 3, log: log)
        try await manager.launch(ranked: ranked, pendingInvites: ["i1", "r5"])
        let snap = await manager.snapshot()
        #expect(Set(snap.awake) == ["i1", "r5", "r1"])
        #expect(snap.protectedAwake.sorted() == ["i1", "r5"])
        #expect(snap.sleepingCount == 4)                            // r2, r3, r4, r6
        #expect(snap.wakesByReason == [.pendingInvite: 2, .appLaunch: 1])
        #expect(Set(log.activated()) == ["i1", "r5", "r1"])
    }

    @Test func launchFillsCapacityWhenNoInvites() async throws {
        let ranked = (1...30).map { InboxActivity(inboxId: "r\($0)", lastActivityMs: Int64(1_000 - $0)) }
        let manager = makeManager(capacity: 20)
        try await manager.launch(ranked: ranked, pendingInvites: [])
        let snap = await manager.snapshot()
        #expect(snap.awake == (1...20).map { "r\($0)" })            // most recent first
        #expect(snap.sleepingCount == 10)
    }

    @Test func launchBreaksTimestampTiesByRank() async throws {
        let ranked = ["x", "y", "z"].map { InboxActivity(inboxId: $0, lastActivityMs: 7) }
        let manager = makeManager(capacity: 2)
        try await manager.launch(ranked: ranked, pendingInvites: [])
        #expect(await manager.snapshot().awake == ["x", "y"])
    }

    @Test func rebalanceFollowsTheRanking() async throws {
        let log = ResourceLog()
        let ranking = [InboxActivity(inboxId: "c", lastActivityMs: 900),
                       InboxActivity(inboxId: "d", lastActivityMs: 800),
                       InboxActivity(inboxId: "a", lastActivityMs: 700)]
        let manager = makeManager(capacity: 2, log: log, clock: TickingClock(start: 100),
                                  source: FixedRanking(ranked: ranking))
        try await manager.wake("a", reason: .userInteraction)
        try await manager.wake("b", reason: .userInteraction)
        try await manager.rebalance()
        let snap = await manager.snapshot()
        #expect(snap.awake == ["c", "d"])
        #expect(snap.wakesByReason == [.userInteraction: 2, .activityRanking: 2])
        #expect(Set(log.released()) == ["a", "b"])
    }

    @Test func rebalanceRefillsAfterForceRemove() async throws {
        let ranking = (1...4).map { InboxActivity(inboxId: "r\($0)", lastActivityMs: Int64(100 - $0)) }
        // The database no longer ranks r1 once it is deleted.
        let manager = makeManager(capacity: 2, clock: TickingClock(start: 0),
                                  source: FixedRanking(ranked: Array(ranking.dropFirst())))
        try await manager.launch(ranked: ranking, pendingInvites: [])
        #expect(await manager.forceRemove("r1"))
        #expect(await manager.awakeCount == 1)
        try await manager.rebalance()
        #expect(await manager.snapshot().awake == ["r2", "r3"])
        #expect(await manager.state(of: "r1") == .notTracked)
    }

    @Test func rebalanceWithBrokenSourceChangesNothing() async throws {
        let manager = makeManager(capacity: 2, source: BrokenRanking())
        try await manager.wake("a", reason: .userInteraction)
        await #expect(throws: InboxLifecycleError.rankingUnavailable(errorType: "Down")) {
            try await manager.rebalance()
        }
        #expect(await manager.snapshot().awake == ["a"])
    }

    // MARK: Reasons, removal, capacity

    @Test func wakeReasonsAreCounted() async throws {
        let manager = makeManager(capacity: 2)
        try await manager.wake("a", reason: .userInteraction)
        try await manager.wake("b", reason: .pushNotification)
        try await manager.wake("c", reason: .pushNotification)
        try await manager.wake("c", reason: .pushNotification)     // already awake: not a wake
        try await manager.wake("a", reason: .userInteraction)
        let snap = await manager.snapshot()
        #expect(snap.wakesByReason == [.userInteraction: 2, .pushNotification: 2])   // a woke twice
        #expect(snap.capacity == 2)
        #expect(snap.awake.count == 2)
    }

    @Test func forceRemoveReleasesEvenProtectedAndForgets() async throws {
        let log = ResourceLog()
        let manager = makeManager(capacity: 2, log: log)
        try await manager.setProtected("p", reason: .openInClient, true)
        #expect(await manager.forceRemove("p"))
        #expect(await manager.state(of: "p") == .notTracked)
        #expect(await manager.isProtected("p") == false)
        #expect(log.released() == ["p"])
        #expect(await manager.forceRemove("p") == false)
        #expect(await manager.snapshot().awake.isEmpty)
    }

    @Test func loweringCapacitySleepsTheOldest() async throws {
        let manager = makeManager(capacity: 3)
        for id in ["a", "b", "c"] { try await manager.wake(id, reason: .userInteraction) }
        try await manager.setCapacity(1)
        #expect(await manager.snapshot().awake == ["c"])
        await #expect(throws: InboxLifecycleError.invalidCapacity(0)) { try await manager.setCapacity(0) }
        #expect(await manager.capacity == 1)
    }
}
