import Foundation
import SottoWire

/// A real push socket: `systemd-socket-activate` listening on a Unix socket and starting the
/// given worker exactly as systemd's sotto-push.socket would (Accept=yes: one process per
/// connection; Accept=no: one process handed the listening socket).
///
/// ```swift
/// let server = try PushSocketServer.start(socketPath: dir.path("push.sock"), accept: true,
///                                         command: [try builtExecutable("sotto-notify")],
///                                         environment: ["SOTTO_GROUP_DIR": group])
/// defer { server.stop() }
/// let ack = try PushClient.send(payload, to: server.socketPath)
/// ```
public final class PushSocketServer: @unchecked Sendable {
    public let socketPath: String
    private let process: LoggedProcess

    private init(socketPath: String, process: LoggedProcess) {
        self.socketPath = socketPath
        self.process = process
    }

    /// Starts it with posix_spawn (`LoggedProcess`: Foundation's `Process` stops reaping
    /// children once a long-lived one like this is around), its output drained so a worker
    /// that logs every push never blocks, and waits until it reports the socket bound.
    public static func start(socketPath: String, accept: Bool, command: [String],
                             environment: [String: String] = [:]) throws -> PushSocketServer {
        var arguments = ["-l", socketPath]
        if accept { arguments.append("--accept") }
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) {
            arguments += ["-E", "\(name)=\(value)"]
        }
        arguments += command
        let process = try LoggedProcess.launch("/usr/bin/systemd-socket-activate", arguments,
                                               environment: ProcessInfo.processInfo.environment)
        guard process.waitForLine(containing: "Listening on", timeout: 30) else {
            process.signal(SIGKILL)
            throw PushClient.Failure(message: "systemd-socket-activate did not start: \(process.output.suffix(5))")
        }
        return PushSocketServer(socketPath: socketPath, process: process)
    }

    /// What systemd-socket-activate and its workers printed so far.
    public var log: String { process.output.joined(separator: "\n") }

    /// Waits for the process to exit by itself (Accept=no: the worker after its idle
    /// timeout) and for every worker sharing its output; returns its status and its log.
    public func waitForExit() -> (status: Int32, stderr: String) {
        let status = process.waitForExit()
        unlink(socketPath)
        return (status, log)
    }

    /// SIGTERM (signals are unblocked and default in the child), then waits; removes the socket.
    public func stop() {
        process.signal(SIGTERM)
        _ = process.waitForExit()
        unlink(socketPath)
    }
}

/// A sender: connects to a push socket, writes a payload, half-closes, reads the ack line.
public enum PushClient {
    public struct Failure: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
        public init(message: String) { self.message = message }
    }

    /// Sends `payloads` as one batch (relayd's exchange, docs/push-batch.md) and returns one
    /// ack per payload, in order (nil: no ack line for it).
    public static func sendBatch(_ payloads: [[UInt8]], to socketPath: String, timeoutMs: Int32 = 60_000) throws -> [PushAck?] {
        let fd = try connect(to: socketPath)
        defer { close(fd) }
        switch PushBatchExchange.run(fd, payloads: payloads, timeoutMs: timeoutMs) {
        case .notSpoken: throw Failure(message: "the worker answered the batch as a single push")
        case .acked(let outcomes):
            return outcomes.map { if case .acked(let ack) = $0 { ack } else { nil } }
        }
    }

    /// Sends `payload` (followed by LF unless `newline` is false) and returns the ack line
    /// without its LF. `halfClose` shuts down the write side after the payload.
    /// `body`: bytes written after the payload's LF (a sealed body, docs/protocol/bodies.md);
    /// a write the worker cut short by answering first is not an error.
    public static func send(_ payload: [UInt8], body: [UInt8]? = nil, to socketPath: String, newline: Bool = true,
                            halfClose: Bool = true) throws -> String {
        let fd = try connect(to: socketPath)
        defer { close(fd) }
        var bytes = payload
        if newline { bytes.append(0x0a) }
        try writeAll(fd, bytes)
        if let body { _ = UnixSocket.sendAll(fd, body) }
        if halfClose { shutdown(fd, Int32(SHUT_WR)) }
        return try readAll(fd).trimmingCharacters(in: .newlines)
    }

    public static func send(_ payload: String, to socketPath: String) throws -> String {
        try send(Array(payload.utf8), to: socketPath)
    }

    /// A connected stream socket to `socketPath`.
    public static func connect(to socketPath: String) throws -> Int32 {
        let fd = UnixSocket.connect(socketPath)
        guard fd >= 0 else { throw Failure(message: "connect \(socketPath): errno \(errno)") }
        return fd
    }

    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        guard UnixSocket.sendAll(fd, bytes) else { throw Failure(message: "write: errno \(errno)") }
    }

    public static func readAll(_ fd: Int32) throws -> String {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == ECONNRESET { break }
                throw Failure(message: "read: errno \(errno)")
            }
            if n == 0 { break }
            out += chunk[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
