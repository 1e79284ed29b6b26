import Foundation
import SottoWire
import TestSupport
import Testing

/// What the worker does after a batch's one commit (docs/adr/0027): one events datagram with
/// the batch's highest seq (the daemon's ChangeFeed reads change_log up to there), and one
/// desktop notification per conversation instead of one per message.
@Suite("Worker batches after commit")
struct WorkerBatchAfterCommitTests {
    private func sendBatch(_ payloads: [[UInt8]], to socketPath: String) throws -> [PushExchange.Outcome] {
        let fd = try PushClient.connect(to: socketPath)
        defer { close(fd) }
        guard case .acked(let outcomes) = PushBatchExchange.run(fd, payloads: payloads, timeoutMs: 30_000) else {
            throw PushClient.Failure(message: "the worker answered the batch as a single push")
        }
        return outcomes
    }

    @Test("A batch of 5 sends exactly one datagram, with the highest seq of the batch")
    func oneDatagramPerBatch() throws {
        let f = try WorkerFixture(vectors: try #require(try Vectors.load()))
        let path = f.runtimeDirectory + "/events.sock"
        let fd = UnixSocket.bind(path, type: Int32(SOCK_DGRAM.rawValue))
        #expect(fd >= 0)
        defer { close(fd); unlink(path) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)   // a safety net only: the datagram comes first
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        let socket = try PushSocketServer.start(socketPath: f.tmp.path + "/push.sock", accept: true,
                                                command: [try WorkerRun.worker()], environment: f.environment)
        defer { socket.stop() }
        let pushes = try (0..<5).map { try f.sealTextForRelay("datagram \($0)") }
        let outcomes = try sendBatch(pushes.map(\.payload), to: socket.socketPath)
        #expect(outcomes.allSatisfy { if case .acked(.ok) = $0 { true } else { false } })

        var buffer = [UInt8](repeating: 0, count: 256)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        let datagram = try #require(EventsDatagram.parse(buffer.prefix(max(n, 0))))
        let seq = try f.open().queryOne("SELECT max(seq) FROM change_log")?.int64(0)
        #expect(datagram.seq == seq)
        // The worker logs this after its after-commit work: no second datagram can follow.
        let deadline = Date(timeIntervalSinceNow: 10)
        while !socket.log.contains("batch done"), Date() < deadline { usleep(10_000) }
        #expect(socket.log.contains("batch done"))
        let more = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        #expect(more < 0, "a second datagram: \(String(decoding: buffer.prefix(max(more, 0)), as: UTF8.self))")
    }

    @Test("A batch of 4 messages in one conversation posts one notification: the latest, and how many more")
    func oneNotificationPerConversation() throws {
        let f = try WorkerFixture(vectors: try #require(try Vectors.load()))
        let daemon = try ChildProcess.launch("/usr/bin/dbus-daemon", ["--session", "--nofork", "--print-address=1"])
        defer { daemon.kill(SIGKILL); daemon.terminate() }
        let address = try #require(daemon.readStdoutLine())
        let monitor = try ChildProcess.launch("/usr/bin/stdbuf", ["-oL", "/usr/bin/dbus-monitor", "--address", address,
                                                                  "type='method_call',interface='org.freedesktop.Notifications'"])
        defer { monitor.kill(SIGKILL); monitor.terminate() }
        _ = monitor.waitForLine(containing: "NameAcquired")

        var environment = f.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        let socket = try PushSocketServer.start(socketPath: f.tmp.path + "/push.sock", accept: true,
                                                command: [try WorkerRun.worker()], environment: environment)
        defer { socket.stop() }
        let pushes = try (1...4).map { try f.sealTextForRelay("message \($0)") }
        let outcomes = try sendBatch(pushes.map(\.payload), to: socket.socketPath)
        #expect(outcomes.allSatisfy { if case .acked(.ok) = $0 { true } else { false } })

        // The notification is sent after the acks: wait for the worker's last line, logged
        // after it, then a marker call, before which every Notify is printed.
        let deadline = Date(timeIntervalSinceNow: 30)
        while !socket.log.contains("batch done"), Date() < deadline { usleep(10_000) }
        #expect(socket.log.contains("batch done"))
        _ = try ChildProcess.run("/usr/bin/dbus-send", ["--print-reply", "--reply-timeout=200", "--address=\(address)",
            "--dest=org.freedesktop.Notifications", "/org/freedesktop/Notifications",
            "org.freedesktop.Notifications.GetCapabilities", "string:end-of-test"])
        var notifies = 0
        var strings: [String] = []
        // The worker asks GetCapabilities too (no argument): only the marker's ends the read.
        var capabilitiesCall = false
        while let line = monitor.readStdoutLine() {
            if line.hasPrefix("method call") {
                capabilitiesCall = line.contains("member=GetCapabilities")
                if line.contains("member=Notify") { notifies += 1 }
            } else if let range = line.range(of: "string \"") {
                if capabilitiesCall, line.hasSuffix("string \"end-of-test\"") { break }
                strings.append(String(line[range.upperBound...].dropLast()))
            }
        }
        #expect(notifies == 1)
        #expect(strings.contains("\(f.senderProfileName): message 4 (+3 more)"), "\(strings)")
    }
}
