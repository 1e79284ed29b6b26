import Foundation

/// A long-running child whose stdout and stderr are drained by background threads (a worker
/// that logs every push must never block on a full pipe). Lines are kept, and a waiter can
/// block until a line with a given prefix appears.
///
/// ```swift
/// let daemon = try LoggedProcess.launch("/path/sotto", ["daemon"], environment: env)
/// guard daemon.waitForLine(containing: "ready:", timeout: 30) else { … }
/// daemon.signal(SIGTERM); let status = daemon.waitForExit()
/// ```
final class LoggedProcess: @unchecked Sendable {
    let process = Process()
    private let condition = NSCondition()
    private var lines: [String] = []
    private var openStreams = 2

    static func launch(_ executable: String, _ arguments: [String], environment: [String: String],
                       stdin: FileHandle? = nil) throws -> LoggedProcess {
        let child = LoggedProcess()
        child.process.executableURL = URL(fileURLWithPath: executable)
        child.process.arguments = arguments
        child.process.environment = environment
        let out = Pipe(), err = Pipe()
        child.process.standardOutput = out
        child.process.standardError = err
        child.process.standardInput = stdin ?? FileHandle.nullDevice
        try child.process.run()
        child.drain(out.fileHandleForReading)
        child.drain(err.fileHandleForReading)
        return child
    }

    var pid: Int32 { process.processIdentifier }

    /// Blocks until a line containing `needle` has been printed (true), or the child closed
    /// both streams or `timeout` passed (false).
    func waitForLine(containing needle: String, timeout: TimeInterval) -> Bool {
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
    var output: [String] {
        condition.lock()
        defer { condition.unlock() }
        return lines
    }

    func signal(_ number: Int32) {
        if process.isRunning { kill(process.processIdentifier, number) }
    }

    /// Waits for the child to exit and for its streams to end; returns its status
    /// (a signal death is reported as 128 + signal).
    func waitForExit() -> Int32 {
        process.waitUntilExit()
        condition.lock()
        while openStreams > 0 { condition.wait() }
        condition.unlock()
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }

    private func drain(_ handle: FileHandle) {
        let thread = Thread { [self] in
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                var complete: [String] = []
                while let newline = buffer.firstIndex(of: 0x0a) {
                    complete.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer = Data(buffer[(newline + 1)...])
                }
                if !complete.isEmpty { append(complete) }
            }
            if !buffer.isEmpty { append([String(decoding: buffer, as: UTF8.self)]) }
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
