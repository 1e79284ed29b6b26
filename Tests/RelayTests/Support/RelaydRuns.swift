import Glibc
import TestSupport

/// One device's `sotto-relayd` across restarts: the process running now, if any, and every
/// line the earlier ones printed (tests read the whole log after kills and restarts).
///
/// ```swift
/// let relayd = RelaydRuns()
/// let process = try relayd.launch(["--ack-wait-ms", "3000"], environment: env)
/// relayd.stop(SIGKILL)            // a crash; SIGTERM (the default) is a stop
/// relayd.output                   // every line, across runs
/// ```
final class RelaydRuns {
    private(set) var current: LoggedProcess?
    private var earlier: [String] = []

    /// Starts a new sotto-relayd (the previous one must be stopped).
    func launch(_ arguments: [String], environment: [String: String]) throws -> LoggedProcess {
        let process = try LoggedProcess.launch(try builtExecutable("sotto-relayd"), arguments, environment: environment)
        current = process
        return process
    }

    /// Signals the running one, waits for its exit and keeps what it printed.
    func stop(_ signal: Int32 = SIGTERM) {
        guard let current else { return }
        current.signal(signal)
        _ = current.waitForExit()
        earlier += current.output
        self.current = nil
    }

    var output: [String] { earlier + (current?.output ?? []) }
}
