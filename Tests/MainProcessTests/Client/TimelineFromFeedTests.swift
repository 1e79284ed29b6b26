import ControlProtocol
import Foundation
import SottoClient
import SottoWire
import Testing
import TestSupport

/// Issue #34, docs/adr/0070: a timeline applies a new or changed message from the `change`
/// notification that carries it, with no `readMessages` round trip, against real daemons and
/// workers. `Timeline.readCalls` counts every `readMessages` the timeline makes: a read that
/// comes back on the path of a new message fails these tests.
@Suite("Timeline from the change feed", .serialized, .timeLimit(.minutes(6)))
struct TimelineFromFeedTests {
    /// The latest page as `readMessages` answers it, read on a connection of the test's own.
    private func latestPage(_ device: Device, _ conversation: String) throws -> [MessageInfo] {
        try ControlClient.connect(path: device.runtime.controlSocketPath).call(ReadMessagesParams(conversation: conversation)).messages
    }

    private func item(_ timeline: Timeline, text: String) -> TimelineItem? {
        timeline.current.items.first { $0.message.text == text }
    }

    @Test("a message from another device reaches the observer with no readMessages call, as a read describes it, and read")
    func insertWithoutARead() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob], name: "Trip")
        let timeline = Timeline(conversation: trip, socketPath: alice.runtime.controlSocketPath)
        defer { timeline.stop() }
        timeline.start()
        try alice.waitUntil("loaded") { timeline.current.connected && !timeline.isReadingLatest }
        let readsWhenLoaded = timeline.readCalls

        for n in 1...3 { _ = try bob.json(["send", trip, "from bob \(n)"]) }
        try alice.waitUntil("the timeline shows bob's three") { (1...3).allSatisfy { item(timeline, text: "from bob \($0)") != nil } }
        #expect(timeline.readCalls == readsWhenLoaded, "a new message cost \(timeline.readCalls - readsWhenLoaded) readMessages call(s)")
        let shown = try #require(item(timeline, text: "from bob 2")).message
        #expect(shown.senderName == "bob" && !shown.outgoing && shown.deliveryStatus == "received")

        // Shown on screen is read: the list's unread count goes back to 0 (listConversations marks nothing).
        try alice.waitUntil("marked read") { try alice.conversation(trip)?["unread"] as? Int == 0 }
        // What the notification carried is what a read gives.
        let read = try latestPage(alice, trip)
        #expect(timeline.current.items.map(\.message) == read, "the timeline differs from readMessages")
        #expect(timeline.readCalls == readsWhenLoaded)
    }

    @Test("a reply, a reaction and an outgoing message's status moves are applied from the feed, each where it belongs")
    func replyReactionAndStatus() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob], name: "Trip")
        let timeline = Timeline(conversation: trip, socketPath: alice.runtime.controlSocketPath)
        defer { timeline.stop() }
        timeline.start()
        try alice.waitUntil("loaded") { timeline.current.connected && !timeline.isReadingLatest }
        let readsWhenLoaded = timeline.readCalls

        // Alice sends from the timeline: the echo, then the stored message, then its status moves to delivered.
        timeline.send("train at 9?")
        try alice.waitUntil("delivered to bob", timeoutMs: 60_000) {
            item(timeline, text: "train at 9?").map { !$0.isLocalEcho && $0.deliveryStatus == "delivered" } ?? false
        }
        let question = try #require(item(timeline, text: "train at 9?")).message
        #expect(question.deliveries?.map(\.state) == ["delivered"], "its push, as a read shows it")
        #expect(timeline.current.items.filter { $0.message.text == "train at 9?" }.count == 1, "the echo gave way")

        try bob.waitUntil("bob has it") { hasText(bob, trip, "train at 9?") }
        _ = try bob.json(["send", trip, "yes", "--reply-to", question.id])
        _ = try bob.json(["react", trip, question.id, "👍"])
        try alice.waitUntil("the reply and the reaction") { item(timeline, text: "yes") != nil && item(timeline, text: "reacted 👍") != nil }
        let reply = try #require(item(timeline, text: "yes")).message
        #expect(reply.contentType == ContentType.reply && reply.referenceId == question.id)
        let reaction = try #require(item(timeline, text: "reacted 👍")).message
        #expect(reaction.contentType == ContentType.reaction && reaction.referenceId == question.id)
        let order = timeline.current.items.map(\.message.text)
        #expect(order.firstIndex(of: "train at 9?")! < order.firstIndex(of: "yes")!)

        #expect(timeline.readCalls == readsWhenLoaded,
                "sending, a status move, a reply and a reaction cost \(timeline.readCalls - readsWhenLoaded) readMessages call(s)")
        #expect(timeline.current.items.map(\.message) == (try latestPage(alice, trip)), "the timeline differs from readMessages")
    }

    @Test("after a daemon restart the timeline has every message once, in order, and then follows without reading")
    func reconnectLeavesNoGapOrDuplicate() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob], name: "Trip")
        let timeline = Timeline(conversation: trip, socketPath: alice.runtime.controlSocketPath)
        defer { timeline.stop() }
        timeline.start()
        try alice.waitUntil("loaded") { timeline.current.connected }
        _ = try bob.json(["send", trip, "before"])
        try alice.waitUntil("live") { item(timeline, text: "before") != nil }

        alice.stopDaemon()
        try alice.waitUntil("the timeline saw the daemon go") { !timeline.current.connected }
        for n in 1...3 { _ = try bob.json(["send", trip, "while down \(n)"]) }
        try alice.waitUntil("alice's worker stored them", timeoutMs: 60_000) {
            try alice.query("SELECT count(*) FROM message WHERE conversationId = ? AND contentType = ?",
                            [.text(trip), .text(ContentType.text)])[0].int64(0) >= 4
        }
        try alice.startDaemon()
        try alice.waitUntil("caught up after the restart", timeoutMs: 60_000) {
            timeline.current.connected && !timeline.isReadingLatest
                && (1...3).allSatisfy { item(timeline, text: "while down \($0)") != nil }
        }
        let readsAfterReconnect = timeline.readCalls
        _ = try bob.json(["send", trip, "after"])
        try alice.waitUntil("live again") { item(timeline, text: "after") != nil }
        #expect(timeline.readCalls == readsAfterReconnect, "a message after the reconnect cost a read")

        let ids = timeline.current.items.map(\.id)
        #expect(Set(ids).count == ids.count, "a duplicate: \(timeline.current.items.map(\.message.text))")
        #expect(timeline.current.items.map(\.message) == (try latestPage(alice, trip)), "a gap or a difference from readMessages")
    }
}
