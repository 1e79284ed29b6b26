import Foundation

/// A spawned program with pipes on stdin, stdout and stderr, for tests that drive real
/// processes. Reads block until the child writes or exits: no sleeps.
///
/// ```swift
/// let child = try ChildProcess.launch("/usr/bin/sqlite3", ["db.sqlite"])
/// child.write("SELECT 1;\n")
/// let line = child.readStdoutLine()
/// ```
public final class ChildProcess: @unchecked Sendable {
    public let process = Process()
    private let stdinPipe = Pipe()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private var stdoutBuffer = Data()
    private var stderrBuffer = Data()

    /// Every end of the three pipes is close-on-exec at once: Foundation's `Process` does not
    /// close other descriptors in a child, so a process another thread spawned while this
    /// child starts inherited them, and one holding the write end of this child's stdout
    /// kept `finish()` from ever seeing end of file (found: the restarted power-cut file system
    /// held a `sotto send`'s pipes, and the test waited on the exited CLI for 120 s). `Process`
    /// still gives the child its own ends: dup2 onto 0, 1 and 2 clears the flag.
    private init() {
        for pipe in [stdinPipe, stdoutPipe, stderrPipe] {
            for handle in [pipe.fileHandleForReading, pipe.fileHandleForWriting] {
                _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
            }
        }
    }

    /// Starts `executable`; `environment` entries are added to (or override) this process's.
    /// `directory` is the working directory (default: this process's).
    public static func launch(_ executable: String, _ arguments: [String] = [],
                              environment: [String: String] = [:], directory: String? = nil) throws -> ChildProcess {
        let child = ChildProcess()
        if let directory { child.process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        child.process.executableURL = URL(fileURLWithPath: executable)
        child.process.arguments = arguments
        child.process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        child.process.standardInput = child.stdinPipe
        child.process.standardOutput = child.stdoutPipe
        child.process.standardError = child.stderrPipe
        try child.process.run()
        return child
    }

    public var pid: Int32 { process.processIdentifier }

    public func write(_ text: String) {
        write(bytes: Array(text.utf8))
    }

    public func write(bytes: [UInt8]) {
        try? stdinPipe.fileHandleForWriting.write(contentsOf: Data(bytes))
    }

    /// Reads stdout lines until one contains `needle`; nil if stdout ends first.
    public func waitForLine(containing needle: String) -> String? {
        while let line = readStdoutLine() {
            if line.contains(needle) { return line }
        }
        return nil
    }

    /// Closes stdin and waits for exit; returns the exit status.
    public func waitForExit() -> Int32 {
        closeStdin()
        process.waitUntilExit()
        return process.terminationStatus
    }

    public func closeStdin() {
        try? stdinPipe.fileHandleForWriting.close()
    }

    /// The next line of stdout, or nil at end of stream.
    public func readStdoutLine() -> String? { readLine(from: stdoutPipe, buffer: &stdoutBuffer) }

    /// The next line of stderr, or nil at end of stream.
    public func readStderrLine() -> String? { readLine(from: stderrPipe, buffer: &stderrBuffer) }

    /// Waits for exit; returns all remaining stdout and stderr and the exit status.
    public func finish() -> (status: Int32, stdout: String, stderr: String) {
        closeStdin()
        let out = stdoutBuffer + stdoutPipe.fileHandleForReading.readDataToEndOfFile()
        let err = stderrBuffer + stderrPipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    public func terminate() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    public func kill(_ signal: Int32) {
        if process.isRunning { Foundation.kill(process.processIdentifier, signal) }
    }

    private func readLine(from pipe: Pipe, buffer: inout Data) -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0a) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[(newline + 1)...])
                return String(decoding: line, as: UTF8.self)
            }
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty {
                if buffer.isEmpty { return nil }
                defer { buffer = Data() }
                return String(decoding: buffer, as: UTF8.self)
            }
            buffer.append(chunk)
        }
    }

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
