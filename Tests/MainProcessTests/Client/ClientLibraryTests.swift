import ControlProtocol
import Foundation
import SharedStore
import SottoClient
import SottoWire
import Synchronization
import Testing
import TestSupport

/// Issue #34 part 1: the client library against real daemons and workers. The conversation
/// list follows a message from another device; a timeline is woken by its own conversation
/// only; history comes a page at a time; a daemon restart is survived with no change lost
/// or repeated (docs/adr/0064).
@Suite("Client library", .serialized, .timeLimit(.minutes(6)))
struct ClientLibraryTests {
    /// Collects what an observer is given, from the library's threads.
    final class Recorder<Value: Sendable>: Sendable {
        private let values = Mutex<[Value]>([])
        func record(_ value: Value) { values.withLock { $0.append(value) } }
        var all: [Value] { values.withLock { $0 } }
    }

    @Test("the list shows a message another device sent: last message, unread, order")
    func listFollowsAnotherDevice() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob], name: "Trip")
        let other = try net.conversation(creator: alice, joiners: [bob], name: "Other")
        let list = LiveConversationList(socketPath: alice.runtime.controlSocketPath)
        let seen = Recorder<LiveConversationList.Snapshot>()
        let observation = list.observe { seen.record($0) }
        defer { observation.cancel(); list.stop() }
        list.start()
        try alice.waitUntil("the list loads") { list.current.generation > 0 && list.current.conversations.count == 2 }
        // `sotto ls` puts Other first (created last); a message in Trip moves Trip to the top.
        #expect(list.current.conversations.map(\.id) == (try alice.conversations()).map { $0["id"] as? String ?? "" })

        _ = try bob.json(["send", trip, "hello from bob"])
        try alice.waitUntil("alice's list shows bob's message") {
            list.current.find(trip)?.lastMessage?.text == "hello from bob"
        }
        let row = try #require(list.current.find(trip))
        #expect(row.unread == 1)
        #expect(row.lastMessage?.senderName == "bob")
        #expect(list.current.conversations.map(\.id) == (try alice.conversations()).map { $0["id"] as? String ?? "" },
                "the order `sotto ls` gives")
        #expect(list.current.conversations.first?.id == trip, "the conversation with the newest message first")
        #expect(seen.all.last?.find(trip)?.lastMessage?.text == "hello from bob", "observers were told")
        _ = other
    }

    @Test("a timeline of B is not woken by a message in A")
    func timelinesAreWokenByTheirOwnConversationOnly() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let a = try net.conversation(creator: alice, joiners: [bob], name: "A")
        let b = try net.conversation(creator: alice, joiners: [bob], name: "B")
        let path = alice.runtime.controlSocketPath
        let timelineA = Timeline(conversation: a, socketPath: path)
        let timelineB = Timeline(conversation: b, socketPath: path)
        let seenA = Recorder<TimelineSnapshot>(), seenB = Recorder<TimelineSnapshot>()
        let observations = [timelineA.observe { seenA.record($0) }, timelineB.observe { seenB.record($0) }]
        defer { observations.forEach { $0.cancel() }; timelineA.stop(); timelineB.stop() }
        timelineA.start()
        timelineB.start()
        // Loaded once each, and the observers told (`current` changes just before they are).
        try alice.waitUntil("both timelines loaded") { seenA.all.contains(where: \.connected) && seenB.all.contains(where: \.connected) }
        // B's own roster message ("B: 2 members") may reach B's timeline after it loaded, on
        // a loaded machine: a wake by B's own message, which is not what this test is about.
        try alice.waitUntil("B's roster in B") { timelineB.current.items.contains { $0.message.text.hasPrefix("B: 2 members") } }
        let settled = seenB.all.count

        _ = try bob.json(["send", a, "only in A"])
        try alice.waitUntil("A shows it") { timelineA.current.items.contains { $0.message.text == "only in A" } }
        _ = try bob.json(["send", b, "then in B"])
        try alice.waitUntil("B shows its own") { timelineB.current.items.contains { $0.message.text == "then in B" } }

        // Every snapshot B published since it settled already holds B's message: nothing
        // woke it for A's (a change feed of all conversations would have, before B's arrived).
        let woken = seenB.all.dropFirst(settled)
        #expect(!woken.isEmpty)
        #expect(woken.allSatisfy { snapshot in snapshot.items.contains { $0.message.text == "then in B" } },
                "B was woken before its own message came: \(woken.map { $0.items.map(\.message.text) })")
        #expect(!seenB.all.contains { $0.items.contains { $0.message.text == "only in A" } })
    }

    @Test("history comes from the daemon a page at a time, oldest to newest, none twice")
    func historyIsPaged() throws {
        let tmp = try TemporaryDirectory(prefix: "pg")
        let alice = try Device.start("alice", in: tmp.path)
        defer { alice.stop() }
        let id = try require(try alice.json(["new", "--name", "Notes"])["conversationId"] as? String, "conversationId")
        let client = try ControlClient.connect(path: alice.runtime.controlSocketPath)
        for n in 1...25 { _ = try client.call(SendMessageParams(conversation: id, text: "note \(n)")) }

        let timeline = Timeline(conversation: id, socketPath: alice.runtime.controlSocketPath, pageSize: 10)
        defer { timeline.stop() }
        timeline.start()
        try alice.waitUntil("the latest page") { timeline.current.items.count == 10 }
        #expect(timeline.current.items.map(\.message.text) == (16...25).map { "note \($0)" }, "only the latest page")
        #expect(timeline.current.hasOlder)
        timeline.loadOlder()
        try alice.waitUntil("a second page") { timeline.current.items.count == 20 && !timeline.current.loadingOlder }
        timeline.loadOlder()
        try alice.waitUntil("the start") { timeline.current.items.count == 25 && !timeline.current.loadingOlder }
        #expect(timeline.current.items.map(\.message.text) == (1...25).map { "note \($0)" })
        #expect(!timeline.current.hasOlder, "the last page was short: nothing older")
        #expect(Set(timeline.current.items.map(\.id)).count == 25)
    }

    @Test("a local echo shows at once as pending, then takes the daemon's id and status")
    func localEcho() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob], name: "Trip")
        let timeline = Timeline(conversation: trip, socketPath: alice.runtime.controlSocketPath)
        let seen = Recorder<TimelineSnapshot>()
        let observation = timeline.observe { seen.record($0) }
        defer { observation.cancel(); timeline.stop() }
        timeline.start()
        try alice.waitUntil("loaded") { timeline.current.connected }
        timeline.send("echo me")
        // The echo is published before any I/O: the first snapshot with the text is the echo.
        let first = try #require(seen.all.first { $0.items.contains { $0.message.text == "echo me" } })
        let echo = try #require(first.items.first { $0.message.text == "echo me" })
        #expect(echo.isLocalEcho && echo.deliveryStatus == "pending" && echo.id.hasPrefix("local-"))
        try alice.waitUntil("delivered to bob and shown so") {
            timeline.current.items.contains { $0.message.text == "echo me" && !$0.isLocalEcho && $0.deliveryStatus == "delivered" }
        }
        #expect(timeline.current.items.filter { $0.message.text == "echo me" }.count == 1, "the echo gave way to the stored message")
        #expect(hasText(bob, trip, "echo me"))
    }

    @Test("a daemon restart is survived: the feed resumes after its last seq, no change missed or repeated")
    func survivesADaemonRestart() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob], name: "Trip")
        let changes = Recorder<ChangeNotification>()
        let disconnects = Recorder<String>()
        let feed = ChangeFeedSession(socketPath: alice.runtime.controlSocketPath) { event in
            switch event {
            case .changes(let batch): batch.forEach { changes.record($0) }
            case .disconnected(let reason): disconnects.record(reason)
            case .connected, .refused: break
            }
        }
        let timeline = Timeline(conversation: trip, socketPath: alice.runtime.controlSocketPath)
        defer { feed.stop(); timeline.stop() }
        feed.start()
        timeline.start()
        try alice.waitUntil("following") { feed.lastSeq != nil && timeline.current.connected }
        let firstSeq = try #require(feed.lastSeq)

        _ = try bob.json(["send", trip, "before the restart"])
        try alice.waitUntil("seen live") { changes.all.contains { $0.text == "before the restart" } }

        alice.stopDaemon()
        // Bob's pushes reach alice's worker while her daemon is down: change_log rows the
        // feed has not delivered.
        _ = try bob.json(["send", trip, "while down 1"])
        _ = try bob.json(["send", trip, "while down 2"])
        try alice.waitUntil("alice's worker stored both", timeoutMs: 60_000) {
            try alice.query("SELECT count(*) FROM message WHERE conversationId = ?", [.text(trip)])[0].int64(0) >= 3
        }
        try alice.startDaemon()
        _ = try bob.json(["send", trip, "after the restart"])
        try alice.waitUntil("resumed", timeoutMs: 60_000) { changes.all.contains { $0.text == "after the restart" } }
        try alice.waitUntil("the timeline caught up") {
            ["while down 1", "while down 2", "after the restart"].allSatisfy { text in
                timeline.current.items.contains { $0.message.text == text }
            }
        }

        #expect(!disconnects.all.isEmpty, "the connection did drop")
        let seqs = changes.all.map(\.seq)
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "increasing, none twice: \(seqs)")
        #expect((seqs.first ?? 0) <= firstSeq + 1, "live from where the subscription started")
        let logged = try alice.query("SELECT seq FROM change_log WHERE seq >= ? AND seq <= ? ORDER BY seq",
                                     [.integer(seqs.first ?? 0), .integer(seqs.last ?? 0)]).map { try $0.int64(0) }
        #expect(seqs == logged, "every change in change_log, none missing")
        for text in ["before the restart", "while down 1", "while down 2", "after the restart"] {
            #expect(changes.all.filter { $0.kind == "messageInserted" && $0.text == text }.count == 1, "\(text) once")
        }
        #expect(timeline.current.items.filter { $0.message.text == "while down 1" }.count == 1)
    }
}
