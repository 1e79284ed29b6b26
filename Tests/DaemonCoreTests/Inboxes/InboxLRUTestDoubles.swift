@testable import DaemonCore
import Synchronization

/// A clock that advances by one millisecond each time it is read, so every wake is "later".
final class TickingClock: Sendable {
    private let value: Atomic<Int64>
    init(start: Int64 = 1_000) { value = Atomic(start) }
    func now() -> Int64 { value.add(1, ordering: .relaxed).newValue }
}

/// Everything the resources of all inboxes did, in order.
final class ResourceLog: Sendable {
    enum Event: Equatable, Sendable {
        case activate(String, serial: Int)
        case release(String, serial: Int)
    }
    private let state = Mutex<(events: [Event], nextSerial: Int)>(([], 0))

    func nextSerial() -> Int { state.withLock { $0.nextSerial += 1; return $0.nextSerial } }
    func record(_ event: Event) { state.withLock { $0.events.append(event) } }
    var events: [Event] { state.withLock { $0.events } }

    /// Inbox ids in the order of the given kind of event.
    func activated() -> [String] {
        events.compactMap { if case .activate(let id, _) = $0 { id } else { nil } }
    }
    func released() -> [String] {
        events.compactMap { if case .release(let id, _) = $0 { id } else { nil } }
    }
}

struct ActivationRefused: Error {}

final class RecordingResources: AwakeInboxResources {
    let inboxId: String
    let serial: Int
    let log: ResourceLog
    let fails: Bool

    init(inboxId: String, log: ResourceLog, fails: Bool) {
        self.inboxId = inboxId
        self.log = log
        self.fails = fails
        serial = log.nextSerial()
    }

    func activate() async throws {
        log.record(.activate(inboxId, serial: serial))
        await Task.yield()   // give interleavings a chance to show up
        if fails { throw ActivationRefused() }
    }

    func release() async {
        await Task.yield()
        log.record(.release(inboxId, serial: serial))
    }
}

struct FixedRanking: InboxActivitySource {
    let ranked: [InboxActivity]
    func rankedInboxes(limit: Int) async throws -> [InboxActivity] { Array(ranked.prefix(limit)) }
}

struct BrokenRanking: InboxActivitySource {
    struct Down: Error {}
    func rankedInboxes(limit: Int) async throws -> [InboxActivity] { throw Down() }
}

func makeInboxLRU(capacity: Int, log: ResourceLog = ResourceLog(), clock: TickingClock = TickingClock(),
                 source: (any InboxActivitySource)? = nil,
                 failing: Set<String> = []) -> InboxLRU {
    InboxLRU(capacity: capacity, activitySource: source, clock: { clock.now() }) { inboxId in
        RecordingResources(inboxId: inboxId, log: log, fails: failing.contains(inboxId))
    }
}
