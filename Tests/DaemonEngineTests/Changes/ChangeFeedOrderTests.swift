import DaemonStore
@testable import DaemonCore
@testable import DaemonEngine
import Foundation
import SharedStore
import Testing
import TestSupport

/// The change feed in process, on a real database file: one registry, subscribers told only
/// after the consumer (the conversation windows) applied a change, in seq order, filtered by
/// conversation, and a catch-up that returns only once what was committed before it is applied.
@Suite("Change feed (in process)")
struct ChangeFeedOrderTests {
    /// What the consumer did, and when a test's probes ran.
    actor Recorder {
        private(set) var entered: [Int64] = []
        private(set) var applied: [Int64] = []
        private var gateOpen = true
        private var gateWaiters: [CheckedContinuation<Void, Never>] = []

        func closeGate() { gateOpen = false }
        func openGate() {
            gateOpen = true
            for waiter in gateWaiters { waiter.resume() }
            gateWaiters.removeAll()
        }

        func apply(_ changes: [FeedChange]) async {
            entered += changes.map(\.seq)
            if !gateOpen { await withCheckedContinuation { gateWaiters.append($0) } }
            for _ in 0..<10 { await Task.yield() }  // a store's work takes a while: others run meanwhile
            applied += changes.map(\.seq)
        }
    }

    actor Flag {
        private(set) var isSet = false
        func set() { isSet = true }
    }

    static func database() throws -> (StoreFixture, DaemonDatabase) {
        let fixture = try StoreFixture(seed: false)
        return (fixture, try DaemonDatabase(directory: fixture.directory))
    }

    @discardableResult
    static func commit(_ db: DaemonDatabase, conversation: String) async throws -> Int64 {
        try await db.write { conn in
            try ChangeLog.append(conn, kind: .localStateChanged, conversationId: conversation, entityId: nil)
        }
    }

    /// Polls a condition with a deadline (no sleeping as synchronisation).
    static func eventually(_ what: String, _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !(await condition()) {
            if ContinuousClock.now > deadline { throw DaemonProcess.Failure(description: "timed out: \(what)") }
            await Task.yield()
        }
    }

    @Test("a subscriber hears of a change only after the consumer applied it, in seq order, under concurrent catch-ups")
    func toldAfterApplied() async throws {
        let (fixture, db) = try Self.database()
        defer { withExtendedLifetime(fixture) {} }
        let recorder = Recorder()
        let feed = ChangeFeed(database: db, startingAt: 0) { await recorder.apply($0) }
        let (_, stream, _) = await feed.subscribe(since: nil)
        let writers = 200
        // Reads while the writers write: each change is checked the moment it is told.
        let reader = Task { () -> (told: [Int64], early: [Int64]) in
            var told: [Int64] = []
            var early: [Int64] = []
            for await change in stream {
                if !(await recorder.applied.contains(change.seq)) { early.append(change.seq) }
                told.append(change.seq)
                if told.count == writers { break }
            }
            return (told, early)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<writers {
                group.addTask {
                    try await Self.commit(db, conversation: "c\(index % 3)")
                    await feed.catchUp()
                }
            }
            try await group.waitForAll()
        }
        let (told, early) = await reader.value
        #expect(early.isEmpty, "told before applied: \(early.prefix(10))")
        #expect(told == Array(1...Int64(writers)))
        #expect(await recorder.applied == told)
    }

    @Test("a catch-up asked while another pass is applying returns only once that change is applied")
    func catchUpWaitsForTheRunningPass() async throws {
        let (fixture, db) = try Self.database()
        defer { withExtendedLifetime(fixture) {} }
        let recorder = Recorder()
        let feed = ChangeFeed(database: db, startingAt: 0) { await recorder.apply($0) }
        let seq = try await Self.commit(db, conversation: "c1")
        await recorder.closeGate()
        let first = Task { await feed.catchUp() }
        try await Self.eventually("the first pass is applying #\(seq)") { await recorder.entered == [seq] }
        let returned = Flag()
        let second = Task { () -> Bool in
            await feed.catchUp()
            let applied = await recorder.applied.contains(seq)
            await returned.set()
            return applied
        }
        // Either the second call waits for the pass, or (the defect) it returned at once.
        try await Self.eventually("the second catch-up waits or returns") {
            let waiting = await feed.waitingCatchUps
            let done = await returned.isSet
            return waiting == 1 || done
        }
        await recorder.openGate()
        await first.value
        #expect(await second.value, "catchUp returned before the change committed before it was applied")
        #expect(await feed.lastSeq == seq)
    }

    @Test("catch-ups requested while a pass applies wait as one, not as a task each, and every commit is applied")
    func requestedCatchUpsCoalesce() async throws {
        let (fixture, db) = try Self.database()
        defer { withExtendedLifetime(fixture) {} }
        let recorder = Recorder()
        let feed = ChangeFeed(database: db, startingAt: 0) { await recorder.apply($0) }
        let serving = Task { await feed.serveRequests() }
        let first = try await Self.commit(db, conversation: "c1")
        await recorder.closeGate()
        feed.requestCatchUp()
        try await Self.eventually("the served pass is applying #\(first)") { await recorder.entered == [first] }
        var last = first
        for _ in 0..<100 {
            last = try await Self.commit(db, conversation: "c1")
            feed.requestCatchUp()
        }
        // A task per request (the old wiring) would wait here 100 times over.
        #expect(await feed.waitingCatchUps == 0)
        await recorder.openGate()
        try await Self.eventually("every commit applied") { await recorder.applied.last == last }
        #expect(await recorder.applied == Array(first...last))
        feed.stopServingRequests()
        await serving.value
    }

    @Test("a one-conversation subscriber gets only that conversation's changes, live and replayed")
    func oneConversation() async throws {
        let (fixture, db) = try Self.database()
        defer { withExtendedLifetime(fixture) {} }
        let feed = ChangeFeed(database: db, startingAt: 0) { _ in }
        var expectA: [Int64] = []
        for index in 0..<20 {
            let seq = try await Self.commit(db, conversation: index % 4 == 0 ? "A" : "B")
            if index % 4 == 0 { expectA.append(seq) }
        }
        await feed.catchUp()
        let (_, replay, _) = await feed.subscribe(since: 0, conversationId: "A")
        let (_, live, _) = await feed.subscribe(since: nil, conversationId: "A")
        for _ in 0..<100 { try await Self.commit(db, conversation: "B") }
        let lastA = try await Self.commit(db, conversation: "A")
        await feed.catchUp()
        var replayed: [Int64] = []
        for await change in replay {
            #expect(change.conversationId == "A")
            replayed.append(change.seq)
            if change.seq == lastA { break }
        }
        #expect(replayed == expectA + [lastA])
        var iterator = live.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.seq == lastA, "B's 100 changes reached A's subscriber")
    }

    /// What the consumer was given, in order.
    actor Applied {
        private(set) var changes: [FeedChange] = []
        func add(_ batch: [FeedChange]) { changes += batch }
    }

    @Test("a new message is read once, in the feed's pass: the consumer and every subscriber get that value, even when its row is gone before they look")
    func changeBuiltOnceInThePass() async throws {
        let fixture = try StoreFixture()
        let db = try DaemonDatabase(directory: fixture.directory)
        let applied = Applied()
        let startSeq = try db.read { conn in try ChangeLogRepository.latestSeq(on: conn) }
        let feed = ChangeFeed(database: db, startingAt: startSeq) { changes in
            await applied.add(changes)
            // Gone before any subscriber hears of it (as an explode would wipe it).
            for change in changes where change.knownKind == .messageInserted {
                _ = try? await db.write { conn in try conn.execute("DELETE FROM message WHERE id = '\(change.change.entityId ?? "")'") }
            }
        }
        let (_, first, _) = await feed.subscribe(since: nil)
        let (_, second, _) = await feed.subscribe(since: nil)
        let conn = try fixture.open()
        _ = try conn.immediateTransaction { () throws(IncomingWriteError) in
            try IncomingMessageWriter.write(fixture.text("read once"), recipientInboxId: fixture.inboxId,
                                            topic: fixture.topic, now: fixture.now, on: conn)
        }
        await feed.catchUp()

        let inserted = await applied.changes.filter { $0.knownKind == .messageInserted }
        #expect(inserted.count == 1)
        #expect(inserted.first?.message?.text == "read once", "the consumer got the message from the pass")
        #expect(inserted.first?.inboxId == fixture.inboxId)
        #expect(try db.read { conn in try MessageRowRepository.find(id: inserted.first?.change.entityId ?? "", on: conn) } == nil)
        for stream in [first, second] {
            var iterator = stream.makeAsyncIterator()
            var told = await iterator.next()
            while let change = told, change.knownKind != .messageInserted { told = await iterator.next() }
            #expect(told?.message?.text == "read once", "a subscriber re-read the row instead of getting the pass's value")
            #expect(told?.senderName == "Sender")
            #expect(told?.message?.isOutgoing == false)
        }
    }

    @Test("a subscriber whose stream ended is forgotten; finishAll ends every stream")
    func endedSubscriberIsForgotten() async throws {
        let (fixture, db) = try Self.database()
        defer { withExtendedLifetime(fixture) {} }
        let feed = ChangeFeed(database: db, startingAt: 0) { _ in }
        do {
            let (_, stream, _) = await feed.subscribe(since: nil)
            #expect(await feed.subscriberCount == 1)
            let iterate = Task { for await _ in stream { break } }
            try await Self.commit(db, conversation: "c1")
            await feed.catchUp()
            await iterate.value
        }
        try await Self.eventually("the ended subscriber is dropped") { await feed.subscriberCount == 0 }
        let (_, stream, _) = await feed.subscribe(since: nil)
        await feed.finishAll()
        var received = 0
        for await _ in stream { received += 1 }
        #expect(received == 0)
        #expect(await feed.subscriberCount == 0)
    }

    @Test("the conversation store registry creates a store on wake and forgets it on sleep")
    func registryCreatesOnWakeAndDropsOnSleep() async throws {
        let registry = ConversationWindows(cap: 5)
        let store = try await registry.open("c1", history: [TimelineMessage(id: "h", conversationId: "c1", senderInboxId: "them", sentAtMs: 1,
                                                                            text: "text of h", isOutgoing: false, deliveryStatus: .received)])
        #expect(try await registry.open("c1") === store)
        #expect(await registry.openConversationIds == ["c1"])
        #expect(await registry.drop("c1"))
        #expect(await registry.window(for: "c1") == nil)
        #expect(await registry.drop("c1") == false)
    }
}
