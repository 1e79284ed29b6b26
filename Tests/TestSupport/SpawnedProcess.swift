import Foundation

/// A long-running child whose output goes to a log file — a `sotto daemon` a test starts and
/// stops — started by `Spawn` and reaped by its own `waitpid`. It offers the part of
/// Foundation's `Process` the tests used, which it replaces: on Linux that one's exit monitor
/// answers a SIGCHLD with a blocking `waitpid` on one of its children, so while another test's
/// daemon ran, a daemon that had exited stayed a zombie and `waitUntilExit` never returned (a
/// relay suite hung in `Device.stopDaemon` with two `[sotto] <defunct>` beside it, issue #32).
///
/// ```swift
/// let daemon = try SpawnedProcess.launch(sotto, ["daemon"], environment: env, log: home + "/daemon.log")
/// kill(daemon.processIdentifier, SIGTERM)
/// daemon.waitUntilExit()
/// daemon.terminationReason == .exit && daemon.terminationStatus == 0
/// ```
public final class SpawnedProcess: @unchecked Sendable {
    /// How it ended: an exit (its status is the exit code) or a signal (the status is its number).
    public enum TerminationReason: Sendable, Equatable {
        case exit
        case uncaughtSignal
    }

    public let processIdentifier: Int32
    private let lock = NSLock()
    private var ended: (reason: TerminationReason, status: Int32)?

    private init(pid: Int32) { processIdentifier = pid }

    /// Starts `executable` with exactly `environment`; stdin is `/dev/null`, stdout and stderr
    /// are appended to `log`.
    public static func launch(_ executable: String, _ arguments: [String], environment: [String: String],
                              log: String) throws -> SpawnedProcess {
        SpawnedProcess(pid: try Spawn.start(executable, arguments, environment: environment, appendingOutputTo: log))
    }

    deinit {
        if isRunning {
            kill(processIdentifier, SIGKILL)
            waitUntilExit()
        }
    }

    // MARK: - State

    public var isRunning: Bool { reap(blocking: false) == nil }

    public func waitUntilExit() { _ = reap(blocking: true) }

    /// SIGTERM, without waiting (as `Process.terminate`).
    public func terminate() {
        if isRunning { kill(processIdentifier, SIGTERM) }
    }

    /// The exit code, or the number of the signal that ended it; 0 while it runs.
    public var terminationStatus: Int32 { reap(blocking: false)?.status ?? 0 }

    /// `.exit` while it runs, as Foundation's says.
    public var terminationReason: TerminationReason { reap(blocking: false)?.reason ?? .exit }

    /// Its end once reaped (reaped once, here); nil while it runs.
    private func reap(blocking: Bool) -> (reason: TerminationReason, status: Int32)? {
        lock.lock()
        defer { lock.unlock() }
        if let ended { return ended }
        var raw: Int32 = 0
        while true {
            let result = waitpid(processIdentifier, &raw, blocking ? 0 : WNOHANG)
            if result < 0, errno == EINTR { continue }
            guard result == processIdentifier else { return nil }
            let signal = raw & 0x7f
            ended = signal == 0 ? (.exit, (raw >> 8) & 0xff) : (.uncaughtSignal, signal)
            return ended
        }
    }
}
