import ControlProtocol
import Foundation
import SottoClient
import SottoWire
import Synchronization
import Testing

/// `ChangeFeedSession` against a scripted peer instead of a daemon: resuming with `since`
/// after a dropped connection, a replay's duplicates dropped, garbage on the socket taken as
/// a lost connection (never a change), and `follow` ending when there is no daemon at all.
/// The real daemon restart is in MainProcessTests (ClientLibraryTests, WatchRestartTests).
@Suite("Change feed session")
struct ChangeFeedSessionTests {
    private static func directory() throws -> String {
        let path = NSTemporaryDirectory() + "sotto-feed-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private static func subscribed(_ lastSeq: Int64) -> String {
        JSONRPC.resultLine(id: .number(1), SubscribeResult(lastSeq: lastSeq).json)
    }

    private static func change(_ seq: Int64) -> String {
        JSONRPC.notificationLine(ChangeNotification(seq: seq, kind: "messageInserted", writerPid: 1, createdAtMs: 1, conversationId: "c1"))
    }

    /// The events a session reported, in order.
    final class Events: Sendable {
        private let all = Mutex<[ChangeFeedSession.Event]>([])
        func record(_ event: ChangeFeedSession.Event) { all.withLock { $0.append(event) } }
        var seqs: [Int64] {
            all.withLock { events in events.flatMap { event -> [Int64] in
                if case .changes(let changes) = event { return changes.map(\.seq) }
                return []
            } }
        }
        var disconnects: Int {
            all.withLock { $0.filter { if case .disconnected = $0 { return true } else { return false } }.count }
        }
    }

    /// Polls `condition` every 10 ms for up to `seconds`.
    private static func wait(_ seconds: Double = 10, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            usleep(10_000)
        }
        return true
    }

    @Test("follow with no daemon ends at once with daemonNotRunning, and reports nothing")
    func noDaemon() throws {
        let dir = try Self.directory()
        let events = Events()
        let feed = ChangeFeedSession(socketPath: dir + "/control.sock") { events.record($0) }
        let failure = feed.follow(endingIfNeverConnected: true)
        guard case .daemonNotRunning? = failure else {
            Issue.record("ended with \(String(describing: failure))")
            return
        }
        #expect(events.seqs.isEmpty && events.disconnects == 0)
    }

    @Test("after a dropped connection it subscribes again since the last seq; a replayed change is not delivered twice")
    func resumesWithoutDuplicates() throws {
        let dir = try Self.directory()
        let peer = try ScriptedControlPeer(path: dir + "/control.sock", connections: [
            [Self.subscribed(5), Self.change(6), Self.change(7)],
            // The replay overlaps what was delivered (7), then goes on.
            [Self.subscribed(8), Self.change(7), Self.change(8)],
        ])
        defer { peer.stop() }
        let events = Events()
        let feed = ChangeFeedSession(socketPath: peer.path) { events.record($0) }
        feed.start()
        defer { feed.stop() }
        #expect(Self.wait { events.seqs.count >= 3 }, "\(events.seqs)")
        #expect(events.seqs == [6, 7, 8])
        #expect(events.disconnects >= 1)
        let requests = peer.requests
        #expect(requests.count >= 2)
        #expect(!requests[0].contains("since"), "the first subscription is live: \(requests[0])")
        #expect(requests[1].contains("\"since\":7"), "resumed after the last delivered: \(requests[1])")
    }

    @Test("garbage where the subscribe reply should be: follow ends with a protocol error, no change delivered",
          arguments: ["not json\n", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"lastSeq\":\"x\"}}\n",
                      "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"lastSeq\":1}}\n", "\u{1b}[2J\u{07}\n", "[]\n", ""])
    func garbageSubscribeReply(_ garbage: String) throws {
        let dir = try Self.directory()
        let peer = try ScriptedControlPeer(path: dir + "/control.sock", connections: [[garbage]])
        defer { peer.stop() }
        let events = Events()
        let feed = ChangeFeedSession(socketPath: peer.path) { events.record($0) }
        let failure = feed.follow(endingIfNeverConnected: true)
        guard case .protocolError? = failure else {
            Issue.record("ended with \(String(describing: failure))")
            return
        }
        #expect(events.seqs.isEmpty)
    }

    @Test("garbage after the subscription is a lost connection: what came before stays delivered, nothing of the garbage is",
          arguments: ["not json\n", "{\"jsonrpc\":\"2.0\",\"method\":\"change\",\"params\":{\"seq\":\"8\"}}\n",
                      String(repeating: "x", count: 100) + "\n"])
    func garbageChange(_ garbage: String) throws {
        let dir = try Self.directory()
        let peer = try ScriptedControlPeer(path: dir + "/control.sock", connections: [
            [Self.subscribed(1), Self.change(2), garbage, Self.change(3)],
            [Self.subscribed(3), Self.change(3)],
        ])
        defer { peer.stop() }
        let events = Events()
        let feed = ChangeFeedSession(socketPath: peer.path) { events.record($0) }
        feed.start()
        defer { feed.stop() }
        #expect(Self.wait { events.seqs.count >= 2 }, "\(events.seqs)")
        #expect(events.seqs == [2, 3])
        #expect(events.disconnects >= 1)
        #expect(peer.requests.count >= 2 && peer.requests[1].contains("\"since\":2"), "\(peer.requests)")
    }
}
