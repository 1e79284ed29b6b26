@testable import DaemonCore
import Testing

@Suite("InboxLRU")
struct InboxLRUTests {
    // MARK: Eviction

    @Test func evictsLeastRecentlyActiveFirst() async throws {
        let inboxLRU = makeInboxLRU(capacity: 3)
        for id in ["a", "b", "c"] { try await inboxLRU.wake(id, reason: .userInteraction) }
        await inboxLRU.recordActivity("a", at: 10_000)          // a is now the most recent
        let first = try await inboxLRU.wake("d", reason: .pushNotification)
        #expect(first == .woke(evicted: ["b"]))
        let second = try await inboxLRU.wake("e", reason: .pushNotification)
        #expect(second == .woke(evicted: ["c"]))
        #expect(await inboxLRU.snapshot().awake == ["a", "e", "d"])
        #expect(await inboxLRU.state(of: "b") == .sleeping)
        #expect(await inboxLRU.state(of: "zzz") == .notTracked)
    }

    @Test func activityNeverMovesBackwards() async throws {
        let inboxLRU = makeInboxLRU(capacity: 2)
        try await inboxLRU.wake("a", reason: .userInteraction)
        try await inboxLRU.wake("b", reason: .userInteraction)
        await inboxLRU.recordActivity("a", at: 50_000)
        await inboxLRU.recordActivity("a", at: 1)               // stale report is ignored
        #expect(try await inboxLRU.wake("c", reason: .userInteraction) == .woke(evicted: ["b"]))
    }

    // MARK: Protection

    @Test func protectedInboxIsNeverEvicted() async throws {
        let inboxLRU = makeInboxLRU(capacity: 2)
        try await inboxLRU.wake("a", reason: .userInteraction)
        try await inboxLRU.wake("b", reason: .userInteraction)
        try await inboxLRU.setProtected("a", reason: .openInClient, true)   // a is the oldest
        #expect(try await inboxLRU.wake("c", reason: .pushNotification) == .woke(evicted: ["b"]))
        #expect(try await inboxLRU.wake("d", reason: .pushNotification) == .woke(evicted: ["c"]))
        #expect(await inboxLRU.state(of: "a") == .awake)
        #expect(await inboxLRU.sleep("a") == false)
        #expect(await inboxLRU.state(of: "a") == .awake)
    }

    @Test func protectingASleepingInboxWakesIt() async throws {
        let log = ResourceLog()
        let inboxLRU = makeInboxLRU(capacity: 2, log: log)
        await inboxLRU.recordActivity("x", at: 5)
        #expect(await inboxLRU.state(of: "x") == .sleeping)
        try await inboxLRU.setProtected("x", reason: .pendingJoinRequest, true)
        #expect(await inboxLRU.state(of: "x") == .awake)
        #expect(log.activated() == ["x"])
        #expect(await inboxLRU.snapshot().wakesByReason == [.pendingInvite: 1])
    }

    @Test func onlyProtectedInboxesExceedCapacity() async throws {
        let inboxLRU = makeInboxLRU(capacity: 2)
        try await inboxLRU.wake("u1", reason: .userInteraction)
        try await inboxLRU.setProtected("p1", reason: .openInClient, true)
        try await inboxLRU.setProtected("p2", reason: .pendingInvite, true)
        #expect(await inboxLRU.state(of: "u1") == .sleeping)         // made room for p2
        try await inboxLRU.setProtected("p3", reason: .pendingJoinRequest, true)
        #expect(await inboxLRU.awakeCount == 3)                      // over capacity, all protected
        #expect(try await inboxLRU.wake("u2", reason: .pushNotification) == .noRoom)
        #expect(await inboxLRU.state(of: "u2") == .sleeping)
        #expect(await inboxLRU.snapshot().protectedAwake.sorted() == ["p1", "p2", "p3"])
    }

    @Test func unprotectingSleepsDownToCapacity() async throws {
        let log = ResourceLog()
        let inboxLRU = makeInboxLRU(capacity: 2, log: log)
        for id in ["p1", "p2", "p3"] { try await inboxLRU.setProtected(id, reason: .openInClient, true) }
        // p1 keeps a second reason: still protected after losing the first.
        try await inboxLRU.setProtected("p1", reason: .pendingInvite, true)
        try await inboxLRU.setProtected("p1", reason: .openInClient, false)
        #expect(await inboxLRU.awakeCount == 3)
        try await inboxLRU.setProtected("p2", reason: .openInClient, false)
        #expect(await inboxLRU.state(of: "p2") == .sleeping)
        #expect(await inboxLRU.awakeCount == 2)
        #expect(log.released() == ["p2"])
        // Now capacity is met by p1 and p3; unprotecting p3 keeps it awake (within capacity).
        try await inboxLRU.setProtected("p3", reason: .openInClient, false)
        #expect(await inboxLRU.state(of: "p3") == .awake)
        #expect(try await inboxLRU.wake("n", reason: .pushNotification) == .woke(evicted: ["p3"]))
    }

    // MARK: Rebalance and launch

    @Test func launchWakesInvitesFirstThenMostActive() async throws {
        let log = ResourceLog()
        let ranked = (1...6).map { InboxActivity(inboxId: "r\($0)", lastActivityMs: Int64(100 - $0)) }
        let inboxLRU = makeInboxLRU(capacity: 3, log: log)
        try await inboxLRU.launch(ranked: ranked, pendingInvites: ["i1", "r5"])
        let snap = await inboxLRU.snapshot()
        #expect(Set(snap.awake) == ["i1", "r5", "r1"])
        #expect(snap.protectedAwake.sorted() == ["i1", "r5"])
        #expect(snap.sleepingCount == 4)                            // r2, r3, r4, r6
        #expect(snap.wakesByReason == [.pendingInvite: 2, .appLaunch: 1])
        #expect(Set(log.activated()) == ["i1", "r5", "r1"])
    }

    @Test func launchFillsCapacityWhenNoInvites() async throws {
        let ranked = (1...30).map { InboxActivity(inboxId: "r\($0)", lastActivityMs: Int64(1_000 - $0)) }
        let inboxLRU = makeInboxLRU(capacity: 20)
        try await inboxLRU.launch(ranked: ranked, pendingInvites: [])
        let snap = await inboxLRU.snapshot()
        #expect(snap.awake == (1...20).map { "r\($0)" })            // most recent first
        #expect(snap.sleepingCount == 10)
    }

    @Test func launchBreaksTimestampTiesByRank() async throws {
        let ranked = ["x", "y", "z"].map { InboxActivity(inboxId: $0, lastActivityMs: 7) }
        let inboxLRU = makeInboxLRU(capacity: 2)
        try await inboxLRU.launch(ranked: ranked, pendingInvites: [])
        #expect(await inboxLRU.snapshot().awake == ["x", "y"])
    }

    @Test func rebalanceFollowsTheRanking() async throws {
        let log = ResourceLog()
        let ranking = [InboxActivity(inboxId: "c", lastActivityMs: 900),
                       InboxActivity(inboxId: "d", lastActivityMs: 800),
                       InboxActivity(inboxId: "a", lastActivityMs: 700)]
        let inboxLRU = makeInboxLRU(capacity: 2, log: log, clock: TickingClock(start: 100),
                                  source: FixedRanking(ranked: ranking))
        try await inboxLRU.wake("a", reason: .userInteraction)
        try await inboxLRU.wake("b", reason: .userInteraction)
        try await inboxLRU.rebalance()
        let snap = await inboxLRU.snapshot()
        #expect(snap.awake == ["c", "d"])
        #expect(snap.wakesByReason == [.userInteraction: 2, .activityRanking: 2])
        #expect(Set(log.released()) == ["a", "b"])
    }

    @Test func rebalanceRefillsAfterForceRemove() async throws {
        let ranking = (1...4).map { InboxActivity(inboxId: "r\($0)", lastActivityMs: Int64(100 - $0)) }
        // The database no longer ranks r1 once it is deleted.
        let inboxLRU = makeInboxLRU(capacity: 2, clock: TickingClock(start: 0),
                                  source: FixedRanking(ranked: Array(ranking.dropFirst())))
        try await inboxLRU.launch(ranked: ranking, pendingInvites: [])
        #expect(await inboxLRU.forceRemove("r1"))
        #expect(await inboxLRU.awakeCount == 1)
        try await inboxLRU.rebalance()
        #expect(await inboxLRU.snapshot().awake == ["r2", "r3"])
        #expect(await inboxLRU.state(of: "r1") == .notTracked)
    }

    @Test func rebalanceWithBrokenSourceChangesNothing() async throws {
        let inboxLRU = makeInboxLRU(capacity: 2, source: BrokenRanking())
        try await inboxLRU.wake("a", reason: .userInteraction)
        await #expect(throws: InboxLRUError.rankingUnavailable(errorType: "Down")) {
            try await inboxLRU.rebalance()
        }
        #expect(await inboxLRU.snapshot().awake == ["a"])
    }

    // MARK: Reasons, removal, capacity

    @Test func wakeReasonsAreCounted() async throws {
        let inboxLRU = makeInboxLRU(capacity: 2)
        try await inboxLRU.wake("a", reason: .userInteraction)
        try await inboxLRU.wake("b", reason: .pushNotification)
        try await inboxLRU.wake("c", reason: .pushNotification)
        try await inboxLRU.wake("c", reason: .pushNotification)     // already awake: not a wake
        try await inboxLRU.wake("a", reason: .userInteraction)
        let snap = await inboxLRU.snapshot()
        #expect(snap.wakesByReason == [.userInteraction: 2, .pushNotification: 2])   // a woke twice
        #expect(snap.capacity == 2)
        #expect(snap.awake.count == 2)
    }

    @Test func forceRemoveReleasesEvenProtectedAndForgets() async throws {
        let log = ResourceLog()
        let inboxLRU = makeInboxLRU(capacity: 2, log: log)
        try await inboxLRU.setProtected("p", reason: .openInClient, true)
        #expect(await inboxLRU.forceRemove("p"))
        #expect(await inboxLRU.state(of: "p") == .notTracked)
        #expect(await inboxLRU.isProtected("p") == false)
        #expect(log.released() == ["p"])
        #expect(await inboxLRU.forceRemove("p") == false)
        #expect(await inboxLRU.snapshot().awake.isEmpty)
    }

    @Test func loweringCapacitySleepsTheOldest() async throws {
        let inboxLRU = makeInboxLRU(capacity: 3)
        for id in ["a", "b", "c"] { try await inboxLRU.wake(id, reason: .userInteraction) }
        try await inboxLRU.setCapacity(1)
        #expect(await inboxLRU.snapshot().awake == ["c"])
        await #expect(throws: InboxLRUError.invalidCapacity(0)) { try await inboxLRU.setCapacity(0) }
        #expect(await inboxLRU.capacity == 1)
    }
}
