import Foundation
import Synchronization
import SottoWire
import TestSupport
import Testing

/// Issue #17: a direct fan-out went to one member's endpoint at a time (the 1,000-member
/// benchmark: 136× a send to one member). The outbox now delivers to up to
/// `OutboxSender.directLanes` (8) endpoints at once. Eight members' endpoints here ack only
/// once all eight hold a push at the same moment: one connection at a time never gets there.
@Suite("Outbox: direct pushes to several members at once")
struct DirectLanesTests {
    static let members = 8

    /// Unix sockets that read a push each and ack it only when every one of them holds one
    /// (or give up after `holdSeconds`, closing without an ack, which the sender retries).
    final class BarrierSinks: @unchecked Sendable {
        let paths: [String]
        let holdSeconds: Double
        private let condition = NSCondition()
        private var holding = 0
        private(set) var mostHeldAtOnce = 0
        private var listeners: [Int32] = []

        init(directory: String, count: Int, holdSeconds: Double) {
            paths = (0..<count).map { "\(directory)/m\($0).sock" }
            self.holdSeconds = holdSeconds
            for path in paths {
                let fd = UnixSocket.bind(path, type: Int32(SOCK_STREAM.rawValue))
                precondition(fd >= 0 && listen(fd, 8) == 0, "cannot listen on \(path)")
                listeners.append(fd)
                Thread { [self] in serve(fd) }.start()
            }
        }

        var most: Int {
            condition.lock()
            defer { condition.unlock() }
            return mostHeldAtOnce
        }

        func stop() {
            for fd in listeners { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
        }

        private func serve(_ listener: Int32) {
            while true {
                let fd = UnixSocket.accept(listener, nonBlocking: false)
                guard fd >= 0 else { return }
                var byte: UInt8 = 0
                while read(fd, &byte, 1) == 1, byte != 0x0a {}
                condition.lock()
                holding += 1
                mostHeldAtOnce = max(mostHeldAtOnce, holding)
                condition.broadcast()
                let deadline = Date().addingTimeInterval(holdSeconds)
                while mostHeldAtOnce < paths.count, condition.wait(until: deadline) {}
                let everyone = mostHeldAtOnce >= paths.count
                holding -= 1
                condition.unlock()
                if everyone {
                    let ack = "{\"ok\":true,\"messageId\":\"\(String(repeating: "0", count: 32))\",\"duplicate\":false}\n"
                    _ = UnixSocket.sendAll(fd, Array(ack.utf8))
                }
                close(fd)
            }
        }
    }

    @Test("eight members' endpoints each hold a push at the same moment, and all eight pushes end sent")
    func deliversToSeveralEndpointsAtOnce() async throws {
        try await onOwnThread {
            let tmp = try TemporaryDirectory(prefix: "lanes")
            defer { tmp.remove() }
            // Below the daemon's 10 s ack timeout: a push held alone is closed by the sink first.
            let sinks = BarrierSinks(directory: tmp.path, count: Self.members, holdSeconds: 8)
            defer { sinks.stop() }
            let alice = try Device.start("alice", in: tmp.path)
            defer { alice.stop() }
            let conversation = try #require(try alice.json(["new", "--name", "Eight"])["conversationId"] as? String)
            try FanoutMembers.seed(conversationId: conversation, databasePath: alice.group.databasePath,
                                   count: Self.members) { "unix:" + sinks.paths[$0] }
            _ = try alice.json(["send", conversation, "to all eight at once"])
            try alice.waitUntil("all \(Self.members) pushes sent", timeoutMs: 60_000) {
                try alice.query("SELECT count(*) FROM outbox WHERE state = 'sent'")[0].int64(0) == Int64(Self.members)
            }
            #expect(sinks.most == Self.members, "at most \(sinks.most) endpoints held a push at once")
        }
    }
}
