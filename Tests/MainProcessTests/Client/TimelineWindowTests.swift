import DaemonStore
import Foundation
import SottoClient
import SottoWire
import Testing
import TestSupport

/// docs/adr/0069: a timeline holds a window of pages, so paging through a long conversation
/// costs the same per page and the same memory at its start as at its end. Paging up past
/// the window drops the newest pages; paging back down reads them again, with no gap and no
/// message twice.
@Suite("Client library: the timeline's window", .serialized, .timeLimit(.minutes(6)))
struct TimelineWindowTests {
    @Test("1,000 messages, a window of 200: up to the first and back down to the last, never more than 200 held, none missing")
    func pagingUpAndDownKeepsAWindow() async throws {
        try await onOwnThread { try self.steps() }
    }

    @Test("a page up's cursor is looked up by the primary key, not by scanning the conversation")
    func cursorByPrimaryKey() throws {
        let tmp = try TemporaryDirectory(prefix: "tp")
        let alice = try Device.start("alice", in: tmp.path)
        defer { alice.stop() }
        let plan = try alice.query("EXPLAIN QUERY PLAN " + MessageIdRepository.idsByPrefix,
                                   [.text("c"), .text("ab"), .text("abg"), .integer(2)])
            .map { (try? $0.string(3)) ?? "" }.joined(separator: "\n")
        // Planned on message_timeline (conversationId=?) it read every id of the
        // conversation and sorted them: a page up at message 100,000 cost 11× one at 100.
        #expect(plan.contains("sqlite_autoindex_message_1"), "\(plan)")
        #expect(!plan.contains("TEMP B-TREE"), "\(plan)")
    }

    private func steps() throws {
        let count = 1_000
        let tmp = try TemporaryDirectory(prefix: "tw")
        let alice = try Device.start("alice", in: tmp.path)
        defer { alice.stop() }
        let id = try #require(try alice.json(["new", "--name", "Long"])["conversationId"] as? String)
        let remote = try RemoteMember.join(conversationId: id, databasePath: alice.group.databasePath)
        let start = WallClock.nowMs() - Int64(count)
        let pushes = try (0..<count).map { try remote.push("m \($0)", sentAtMs: start + Int64($0)) }
        for first in stride(from: 0, to: count, by: PushBatchExchange.maxPushes) {
            _ = try PushClient.sendBatch(Array(pushes[first..<min(first + PushBatchExchange.maxPushes, count)]),
                                         to: alice.runtime.pushSocketPath)
        }

        let timeline = Timeline(conversation: id, socketPath: alice.runtime.controlSocketPath, pageSize: 50, window: 200)
        defer { timeline.stop() }
        timeline.start()
        try alice.waitUntil("the latest page") { timeline.current.connected && timeline.current.items.count == 50 }

        /// The numbers of the loaded messages, checked to be consecutive.
        func loaded() throws -> [Int] {
            let numbers = timeline.current.items.compactMap { Int($0.message.text.dropFirst(2)) }
            #expect(numbers.count == timeline.current.items.count)
            #expect(numbers == Array((numbers.first ?? 0)..<((numbers.first ?? 0) + numbers.count)), "a gap or a repeat: \(numbers)")
            return numbers
        }

        var most = 0
        while timeline.current.hasOlder {
            let before = timeline.current.generation
            timeline.loadOlder()
            try alice.waitUntil("an older page") { timeline.current.generation > before && !timeline.current.loadingOlder }
            most = max(most, try loaded().count)
        }
        #expect(most <= 200, "held \(most) messages: every page kept")
        #expect(try loaded().first == 0)
        #expect(timeline.current.hasNewer)

        while timeline.current.hasNewer {
            let before = timeline.current.generation
            timeline.loadNewer()
            try alice.waitUntil("a newer page") { timeline.current.generation > before && !timeline.current.loadingNewer }
            most = max(most, try loaded().count)
        }
        #expect(most <= 200)
        #expect(try loaded().last == count - 1)
        #expect(timeline.current.hasOlder, "the oldest pages were dropped on the way down")

        // Back at the latest page, it follows new messages again.
        _ = try PushClient.send(try remote.push("m \(count)"), to: alice.runtime.pushSocketPath)
        try alice.waitUntil("the new message") { timeline.current.items.last?.message.text == "m \(count)" }
        #expect(try loaded().count <= 200)
    }
}
