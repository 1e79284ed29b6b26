import Foundation

/// A spawned program with pipes on stdin, stdout and stderr, for tests that drive real
/// processes. Reads block until the child writes or exits: no sleeps.
///
/// Started by `Spawn` (posix_spawn, pipes close-on-exec from birth) and reaped by its own
/// `waitpid`, not by Foundation's `Process`: on Linux that one's exit monitor answers any
/// SIGCHLD with a blocking `waitpid` on one of its children, and its pipes were open to
/// inheritance until made close-on-exec, a moment in which a process another thread started
/// could take an end (a test then waited forever for end of file from a CLI that had exited).
///
/// ```swift
/// let child = try ChildProcess.launch("/usr/bin/sqlite3", ["db.sqlite"])
/// child.write("SELECT 1;\n")
/// let line = child.readStdoutLine()
/// ```
public final class ChildProcess: @unchecked Sendable {
    public let pid: Int32
    private let stdinFD: Int32
    private let stdoutFD: Int32
    private let stderrFD: Int32
    private var stdoutBuffer = Data()
    private var stderrBuffer = Data()
    private let lock = NSLock()
    private var stdinOpen = true
    /// Its status once reaped: the exit code, or the signal that ended it (as `Process` said).
    private var status: Int32?

    private init(_ child: Spawn.Child) {
        pid = child.pid
        stdinFD = child.stdin
        stdoutFD = child.stdout
        stderrFD = child.stderr
    }

    deinit {
        closeStdin()
        close(stdoutFD)
        close(stderrFD)
        _ = reap(blocking: false)
    }

    /// A write to a child that closed its stdin is an error to ignore, not a SIGPIPE that
    /// ends the test process.
    private static let pipeSignalIgnored: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// Starts `executable`; `environment` entries are added to (or override) this process's.
    /// `directory` is the working directory (default: this process's).
    public static func launch(_ executable: String, _ arguments: [String] = [],
                              environment: [String: String] = [:], directory: String? = nil) throws -> ChildProcess {
        _ = pipeSignalIgnored
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        return ChildProcess(try Spawn.start(executable, arguments, environment: merged, directory: directory))
    }

    // MARK: - Input

    public func write(_ text: String) {
        write(bytes: Array(text.utf8))
    }

    public func write(bytes: [UInt8]) {
        lock.lock()
        defer { lock.unlock() }
        guard stdinOpen else { return }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(stdinFD, $0.baseAddress! + written, $0.count - written) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return }
            written += count
        }
    }

    public func closeStdin() {
        lock.lock()
        defer { lock.unlock() }
        guard stdinOpen else { return }
        stdinOpen = false
        close(stdinFD)
    }

    // MARK: - Output

    /// Reads stdout lines until one contains `needle`; nil if stdout ends first.
    public func waitForLine(containing needle: String) -> String? {
        while let line = readStdoutLine() {
            if line.contains(needle) { return line }
        }
        return nil
    }

    /// The next line of stdout, or nil at end of stream.
    public func readStdoutLine() -> String? { readLine(from: stdoutFD, buffer: &stdoutBuffer) }

    /// The next line of stdout; nil at end of stream, or when nothing completes a line within
    /// `timeoutMs` (a wait for what may never come fails instead of hanging the run).
    public func readStdoutLine(timeoutMs: Int32) -> String? {
        let deadline = Date(timeIntervalSinceNow: Double(timeoutMs) / 1000)
        while stdoutBuffer.firstIndex(of: 0x0a) == nil {
            var descriptor = pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0)
            let left = Int32(deadline.timeIntervalSinceNow * 1000)
            guard left > 0 else { return nil }
            let ready = poll(&descriptor, 1, left)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return nil }
            let chunk = Self.readChunk(stdoutFD)
            if chunk.isEmpty { break }
            stdoutBuffer.append(chunk)
        }
        return readLine(from: stdoutFD, buffer: &stdoutBuffer)
    }

    /// The next line of stderr, or nil at end of stream.
    public func readStderrLine() -> String? { readLine(from: stderrFD, buffer: &stderrBuffer) }

    private func readLine(from fd: Int32, buffer: inout Data) -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0a) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[(newline + 1)...])
                return String(decoding: line, as: UTF8.self)
            }
            let chunk = Self.readChunk(fd)
            if chunk.isEmpty {
                if buffer.isEmpty { return nil }
                defer { buffer = Data() }
                return String(decoding: buffer, as: UTF8.self)
            }
            buffer.append(chunk)
        }
    }

    /// What one read(2) returns; empty at end of stream (or on an error).
    private static func readChunk(_ fd: Int32) -> Data {
        var bytes = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            return count > 0 ? Data(bytes[0..<count]) : Data()
        }
    }

    private static func readToEnd(_ fd: Int32) -> Data {
        var all = Data()
        while case let chunk = readChunk(fd), !chunk.isEmpty { all.append(chunk) }
        return all
    }

    // MARK: - Exit

    /// Closes stdin and waits for exit; returns the exit status.
    public func waitForExit() -> Int32 {
        closeStdin()
        return reap(blocking: true) ?? -1
    }

    /// Waits for exit; returns all remaining stdout and stderr and the exit status. stderr is
    /// read on a thread of its own meanwhile, so a child that fills one pipe while the other is
    /// read cannot block both.
    public func finish() -> (status: Int32, stdout: String, stderr: String) {
        closeStdin()
        let errors = ErrorsReader(fd: stderrFD)
        let out = stdoutBuffer + Self.readToEnd(stdoutFD)
        let err = stderrBuffer + errors.wait()
        let status = reap(blocking: true) ?? -1
        return (status, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    public var isRunning: Bool { reap(blocking: false) == nil }

    public func terminate() {
        if isRunning { Glibc.kill(pid, SIGTERM) }
        _ = reap(blocking: true)
    }

    public func kill(_ signal: Int32) {
        if isRunning { Glibc.kill(pid, signal) }
    }

    /// Its status once it exited (reaped once, here); nil while it runs.
    private func reap(blocking: Bool) -> Int32? {
        lock.lock()
        defer { lock.unlock() }
        if let status { return status }
        var raw: Int32 = 0
        while true {
            let result = waitpid(pid, &raw, blocking ? 0 : WNOHANG)
            if result < 0, errno == EINTR { continue }
            guard result == pid else { return nil }
            let signal = raw & 0x7f
            status = signal == 0 ? (raw >> 8) & 0xff : signal
            return status
        }
    }

    /// stderr read to its end on a thread of its own.
    private final class ErrorsReader: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var data = Data()

        init(fd: Int32) {
            Thread { [self] in
                data = ChildProcess.readToEnd(fd)
                done.signal()
            }.start()
        }

        func wait() -> Data {
            done.wait()
            return data
        }
    }

    // MARK: - Running to completion

    /// Runs a program to completion and returns its exit status and output.
    public static func run(_ executable: String, _ arguments: [String] = [],
                           environment: [String: String] = [:], stdin: String? = nil, stdinBytes: [UInt8]? = nil,
                           directory: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        let child = try launch(executable, arguments, environment: environment, directory: directory)
        if let stdin { child.write(stdin) }
        if let stdinBytes { child.write(bytes: stdinBytes) }
        return child.finish()
    }
}
