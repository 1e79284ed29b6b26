import DaemonCore
import Foundation
import SottoCrypto
import SottoDaemon
import SottoWire
import TestSupport
import Testing

/// docs/adr/0050: an awake conversation keeps its newest `ConversationWindow.defaultCap`
/// messages in memory; `sotto read` deeper than that reads the database, in the same order.
@Suite("Messaging: read past the in-memory window", .serialized)
struct ReadPastTheWindowTests {
    @Test("1,050 messages, 1,000 kept in memory: read --limit 1050 returns all of them oldest first, --limit 20 the newest 20")
    func readReachesTheDatabase() async throws {
        try await onOwnThread { try self.steps() }
    }

    private func steps() throws {
        let count = 1_050
        let tmp = try TemporaryDirectory(prefix: "rw")
        let alice = try Device.start("alice", in: tmp.path)
        defer { alice.stop() }
        let trip = try require(try alice.json(["new", "--name", "Long"])["conversationId"] as? String)
        let remote = try RemoteMember.join(conversationId: trip, databasePath: alice.group.databasePath)
        let start = WallClock.nowMs() - Int64(count)
        let pushes = try (0..<count).map { try remote.push("m \($0)", sentAtMs: start + Int64($0)) }
        for first in stride(from: 0, to: count, by: PushBatchExchange.maxPushes) {
            let acks = try PushClient.sendBatch(Array(pushes[first..<min(first + PushBatchExchange.maxPushes, count)]),
                                                to: alice.runtime.pushSocketPath)
            #expect(acks.allSatisfy { if case .ok(_, false)? = $0 { true } else { false } }, "\(acks.prefix(2))")
        }
        #expect(ConversationWindow.defaultCap < count)

        let all = try require(try alice.json(["read", trip, "--limit", "\(count)"])["messages"] as? [[String: Any]], "messages")
        #expect(all.count == count)
        #expect(all.first?["text"] as? String == "m 0")
        #expect(all.last?["text"] as? String == "m \(count - 1)")
        #expect(all.compactMap { $0["text"] as? String } == (0..<count).map { "m \($0)" })
        let newest = try require(try alice.json(["read", trip, "--limit", "20"])["messages"] as? [[String: Any]], "messages")
        #expect(newest.compactMap { $0["text"] as? String } == (count - 20..<count).map { "m \($0)" })
    }
}
