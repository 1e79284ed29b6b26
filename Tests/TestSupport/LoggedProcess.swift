import Foundation

/// A long-running child, spawned with `posix_spawn`, whose stdout and stderr are drained by
/// background threads (a worker that logs every push must never block on a full pipe).
/// Lines are kept, and a waiter can block until a line with a given text appears.
///
/// Not Foundation's `Process`: on Linux its exit monitor answers any SIGCHLD with a blocking
/// `waitpid` on one of its children, so with a long-lived child (a socket activator) it
/// stops noticing the others' exits. Here each child is reaped by its own `waitpid`.
///
/// ```swift
/// let daemon = try LoggedProcess.launch("/path/sotto", ["daemon"], environment: env)
/// guard daemon.waitForLine(containing: "ready:", timeout: 30) else { … }
/// daemon.signal(SIGTERM); let status = daemon.waitForExit()
/// ```
public final class LoggedProcess: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let pid: pid_t
    private let stdinFD: Int32
    private let condition = NSCondition()
    private var lines: [String] = []
    private var openStreams = 2
    private var exitStatus: Int32?
    private var usage: rusage?

    private init(pid: pid_t, stdinFD: Int32) {
        self.pid = pid
        self.stdinFD = stdinFD
    }

    public static func launch(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> LoggedProcess {
        let spawned: Spawn.Child
        do { spawned = try Spawn.start(executable, arguments, environment: environment) } catch {
            throw Failure(description: "\(error)")
        }
        let child = LoggedProcess(pid: spawned.pid, stdinFD: spawned.stdin)
        child.drain(spawned.stdout)
        child.drain(spawned.stderr)
        return child
    }

    /// Writes to the child's stdin.
    public func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(stdinFD, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { return }
            bytes = bytes.dropFirst(n)
        }
    }

    public func closeStdin() { close(stdinFD) }

    /// Blocks until a line containing `needle` has been printed (true), or the child closed
    /// both streams or `timeout` passed (false).
    public func waitForLine(containing needle: String, timeout: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if lines.contains(where: { $0.contains(needle) }) { return true }
            if openStreams == 0 { return false }
            if !condition.wait(until: deadline) { return false }
        }
    }

    /// Every line printed so far (stdout and stderr interleaved as read).
    public var output: [String] {
        condition.lock()
        defer { condition.unlock() }
        return lines
    }

    public var isRunning: Bool {
        condition.lock()
        defer { condition.unlock() }
        if exitStatus != nil { return false }
        var status: Int32 = 0
        var reaped = rusage()
        if wait4(pid, &status, WNOHANG, &reaped) == pid {
            exitStatus = Self.decode(status)
            usage = reaped
        }
        return exitStatus == nil
    }

    public func signal(_ number: Int32) {
        if isRunning { kill(pid, number) }
    }

    /// Waits for the child to exit and for its streams to end; returns its status
    /// (a signal death is reported as 128 + signal).
    public func waitForExit() -> Int32 {
        if isRunning {
            var status: Int32 = 0
            var reaped = rusage()
            while wait4(pid, &status, 0, &reaped) < 0, errno == EINTR {}
            condition.lock()
            exitStatus = Self.decode(status)
            usage = reaped
            condition.unlock()
        }
        condition.lock()
        defer { condition.unlock() }
        while openStreams > 0 { condition.wait() }
        return exitStatus ?? -1
    }

    /// User plus system CPU time of the exited child in microseconds (from `wait4`), nil
    /// while it runs. Unlike wall time it barely moves with the machine's load.
    public var cpuMicroseconds: Int64? {
        condition.lock()
        defer { condition.unlock() }
        guard let usage else { return nil }
        return Int64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000
            + Int64(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
    }

    private static func decode(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    private func drain(_ fd: Int32) {
        let thread = Thread { [self] in
            let tail = LineStream.read(fd) { lines in
                append(lines.map { String(decoding: $0, as: UTF8.self) })
            }
            close(fd)
            if !tail.isEmpty { append([String(decoding: tail, as: UTF8.self)]) }
            condition.lock()
            openStreams -= 1
            condition.broadcast()
            condition.unlock()
        }
        thread.start()
    }

    private func append(_ new: [String]) {
        condition.lock()
        lines += new
        // Keep memory bounded under a 50,000-push storm: old lines are only for diagnostics.
        if lines.count > 20_000 { lines.removeFirst(lines.count - 10_000) }
        condition.broadcast()
        condition.unlock()
    }
}
