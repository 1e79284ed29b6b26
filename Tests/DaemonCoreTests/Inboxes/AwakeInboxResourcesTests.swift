@testable import DaemonCore
import Testing

@Suite("AwakeInboxResources lifecycle")
struct AwakeInboxResourcesTests {
    @Test func wakeActivatesAndSleepReleasesTheSameResources() async throws {
        let log = ResourceLog()
        let inboxLRU = makeInboxLRU(capacity: 2, log: log)
        try await inboxLRU.wake("a", reason: .userInteraction)
        #expect(await inboxLRU.sleep("a"))
        #expect(await inboxLRU.sleep("a") == false)                 // already sleeping: no second release
        try await inboxLRU.wake("a", reason: .pushNotification)
        #expect(log.events == [.activate("a", serial: 1), .release("a", serial: 1), .activate("a", serial: 2)])
    }

    @Test func evictedInboxIsReleasedBeforeTheNewOneActivates() async throws {
        let log = ResourceLog()
        let inboxLRU = makeInboxLRU(capacity: 1, log: log)
        try await inboxLRU.wake("a", reason: .userInteraction)
        try await inboxLRU.wake("b", reason: .userInteraction)
        #expect(log.events == [.activate("a", serial: 1), .release("a", serial: 1), .activate("b", serial: 2)])
    }

    @Test func sleepingEverythingReleasesEverything() async throws {
        let log = ResourceLog()
        let inboxLRU = makeInboxLRU(capacity: 5, log: log)
        let ids = (0..<12).map { "i\($0)" }
        for id in ids { try await inboxLRU.wake(id, reason: .pushNotification) }
        for id in ids { await inboxLRU.sleep(id) }
        #expect(await inboxLRU.awakeCount == 0)
        var balance: [Int: Int] = [:]
        for event in log.events {
            switch event {
            case .activate(_, let serial): balance[serial, default: 0] += 1
            case .release(_, let serial): balance[serial, default: 0] -= 1
            }
        }
        #expect(balance.count == 12)                                // one resources object per wake
        #expect(balance.values.allSatisfy { $0 == 0 })
    }

    @Test func failedActivationLeavesTheInboxSleepingAndReleased() async throws {
        let log = ResourceLog()
        let inboxLRU = makeInboxLRU(capacity: 2, log: log, failing: ["bad"])
        await #expect(throws: InboxLRUError.activationFailed(inboxId: "bad", errorType: "ActivationRefused")) {
            try await inboxLRU.wake("bad", reason: .userInteraction)
        }
        #expect(await inboxLRU.state(of: "bad") == .sleeping)
        #expect(await inboxLRU.awakeCount == 0)
        #expect(log.events == [.activate("bad", serial: 1), .release("bad", serial: 1)])
    }

    @Test func launchWithOneFailureKeepsTheOthersAwake() async throws {
        let ranked = ["a", "bad", "c"].enumerated().map { InboxActivity(inboxId: $1, lastActivityMs: Int64(10 - $0)) }
        let inboxLRU = makeInboxLRU(capacity: 3, failing: ["bad"])
        await #expect(throws: InboxLRUError.self) {
            try await inboxLRU.launch(ranked: ranked, pendingInvites: [])
        }
        #expect(await inboxLRU.snapshot().awake == ["a", "c"])
    }

    /// Many concurrent wakes and sleeps of few inboxes: every resources object sees exactly
    /// activate then release (or only activate if still awake), never interleaved, and the
    /// inboxLRU's final state matches the log.
    @Test func concurrentOperationsKeepActivateReleaseOrdered() async throws {
        let log = ResourceLog()
        let inboxLRU = makeInboxLRU(capacity: 2, log: log)
        await withTaskGroup(of: Void.self) { group in
            for round in 0..<200 {
                let id = "i\(round % 4)"
                group.addTask {
                    if round % 3 == 0 { await inboxLRU.sleep(id) }
                    else { _ = try? await inboxLRU.wake(id, reason: .pushNotification) }
                }
            }
        }
        var lastEvent: [Int: ResourceLog.Event] = [:]
        var activeByInbox: [String: Int] = [:]
        for event in log.events {
            switch event {
            case .activate(let id, let serial):
                #expect(lastEvent[serial] == nil)
                #expect(activeByInbox[id] == nil, "two live resources for \(id)")
                activeByInbox[id] = serial
                lastEvent[serial] = event
            case .release(let id, let serial):
                #expect(lastEvent[serial] == .activate(id, serial: serial))
                activeByInbox[id] = nil
                lastEvent[serial] = event
            }
        }
        let awake = Set(await inboxLRU.snapshot().awake)
        #expect(Set(activeByInbox.keys) == awake)
        #expect(awake.count <= 2)
    }
}
