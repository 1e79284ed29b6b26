import ControlProtocol
@testable import ControlServer
import Foundation
import SharedStore
import Synchronization
import Testing
import TestSupport

/// The control server itself on a real Unix socket, with a handler the test holds: graceful
/// stop and the sink the change feed writes to (issue #11, docs/adr/0025).
@Suite("Control server")
struct ControlServerTests {
    /// Answers `status` at once; `wait` only when the test opens the gate; `hold` keeps the
    /// connection for the test to send lines to (as `subscribe` does for the change feed).
    final class GatedHandler: ControlRequestHandler {
        private struct State {
            var waiting: [CheckedContinuation<Void, Never>] = []
            var open = false
            var held: ControlConnection?
            var closed = 0
        }
        private let state = Mutex(State())

        func handle(_ request: JSONRPC.Request, on connection: ControlConnection) async -> String {
            switch request.method {
            case "wait":
                await withCheckedContinuation { continuation in
                    let resumeNow = state.withLock { state in
                        if !state.open { state.waiting.append(continuation) }
                        return state.open
                    }
                    if resumeNow { continuation.resume() }
                }
            case "hold":
                state.withLock { $0.held = connection }
            default:
                break
            }
            return JSONRPC.resultLine(id: request.id, ["method": .string(request.method)])
        }

        func connectionClosed(_ connection: ControlConnection) {
            state.withLock { $0.closed += 1 }
        }

        func openGate() {
            let waiting = state.withLock { state in
                state.open = true
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }

        var waitingCount: Int { state.withLock { $0.waiting.count } }
        var held: ControlConnection? { state.withLock { $0.held } }
        var closedCount: Int { state.withLock { $0.closed } }
    }

    /// The server's handler tasks run on the test process's cooperative pool (two threads on
    /// a two-core machine), which other suites' blocking process tests can hold for minutes in
    /// a full run beside another build (a fresh-clone run at stop 37: about 4 minutes, and
    /// this test failed at 120 s); the deadlines say "never", not "slow", and cost nothing
    /// when the pool is free.
    static let patienceSeconds = 600

    static func until(_ seconds: Double = Double(patienceSeconds), _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            usleep(1000)  // paces the check; the condition decides
        }
        return true
    }

    static func socketPath() throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        return (directory, directory.path + "/control.sock")
    }

    @Test("stop: no new clients, the request in flight is answered, every connection closed, the socket removed")
    func gracefulStop() async throws {
        let (directory, path) = try Self.socketPath()
        _ = directory
        let handler = GatedHandler()
        var limits = ControlLimits(maxConnections: 8)
        limits.stopGraceSeconds = Int64(Self.patienceSeconds)  // the answer needs a pool thread, see patienceSeconds
        let server = try ControlServer.listen(path: path, limits: limits, handler: handler)
        try await server.start()

        let (busy, idle) = try await onOwnThread {
            let busy = try ControlSocketClient(path: path, timeoutSeconds: Self.patienceSeconds)
            let idle = try ControlSocketClient(path: path, timeoutSeconds: Self.patienceSeconds)
            #expect(try idle.result("status")["method"] as? String == "status")
            try busy.sendRaw("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"wait\"}\n")
            #expect(Self.until { handler.waitingCount == 1 })
            return (busy, idle)
        }

        let stopping = Task { await server.stop() }
        try await onOwnThread {
            #expect(idle.readUntilClosed(), "an idle connection is closed at once")
            #expect((try? ControlSocketClient(path: path, timeoutSeconds: 1)) == nil, "no new client is accepted")
            handler.openGate()
            let reply = try busy.readResponse()
            #expect(reply["id"] as? Int == 7)
            #expect((reply["result"] as? [String: Any])?["method"] as? String == "wait")
            #expect(busy.readUntilClosed())
        }
        await stopping.value
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(handler.closedCount == 2)
    }

    @Test("the sink: lines from another task arrive whole and in order; a client that stops reading is dropped, send says false")
    func sinkBoundsUnreadLines() async throws {
        let (directory, path) = try Self.socketPath()
        _ = directory
        let handler = GatedHandler()
        var limits = ControlLimits(maxConnections: 8)
        limits.maxPendingOutputBytes = 256 * 1024
        let server = try ControlServer.listen(path: path, limits: limits, handler: handler)
        try await server.start()

        try await onOwnThread {
            let reader = try ControlSocketClient(path: path, timeoutSeconds: Self.patienceSeconds)
            _ = try reader.result("hold")
            let sink = try #require(handler.held)
            let writer = Thread { for seq in 1...100 { sink.send(JSONRPC.notificationLine(ChangeNotification(seq: Int64(seq), kind: "message_inserted", writerPid: 1, createdAtMs: 0))) } }
            writer.start()
            for seq in 1...100 {
                #expect(try reader.nextNotification()["seq"] as? Int == seq)
            }

            // A subscriber that never reads: sends succeed until the bound, then fail for good.
            let stalled = try ControlSocketClient(path: path, timeoutSeconds: Self.patienceSeconds)
            _ = try stalled.result("hold")
            let stalledSink = try #require(handler.held)
            let line = JSONRPC.notificationLine(ChangeNotification(seq: 1, kind: "message_inserted", writerPid: 1, createdAtMs: 0, text: String(repeating: "x", count: 4000)))
            var accepted = 0
            while stalledSink.send(line), accepted < 100_000 { accepted += 1 }
            #expect(accepted < 100_000, "send never said false")
            #expect(Self.until { stalledSink.isClosed })
            #expect(!stalledSink.send(line))
            #expect(stalled.readUntilClosed())
            // The reader is unharmed.
            #expect(try reader.result("status")["method"] as? String == "status")
        }
        await server.stop()
    }
}
