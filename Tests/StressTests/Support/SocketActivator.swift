import Foundation

/// `systemd-socket-activate` on a Unix socket with its output drained (a worker that logs
/// every push would otherwise block on a full stderr pipe).
///
/// ```swift
/// let yes = try SocketActivator.start(socketPath: dir + "/push.sock", accept: true, command: [worker], environment: env)
/// defer { yes.stop() }
/// ```
final class SocketActivator: @unchecked Sendable {
    let socketPath: String
    private let child: LoggedProcess

    private init(socketPath: String, child: LoggedProcess) {
        self.socketPath = socketPath
        self.child = child
    }

    static func start(socketPath: String, accept: Bool, command: [String],
                      environment: [String: String]) throws -> SocketActivator {
        var arguments = ["-l", socketPath]
        if accept { arguments.append("--accept") }
        for name in ["SOTTO_GROUP_DIR", "SOTTO_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "SOTTO_BUSY_TIMEOUT_MS"] {
            if let value = environment[name] { arguments += ["-E", "\(name)=\(value)"] }
        }
        arguments += command
        let child = try LoggedProcess.launch("/usr/bin/systemd-socket-activate", arguments, environment: environment)
        guard child.waitForLine(containing: "Listening on", timeout: 30) else {
            child.signal(SIGKILL)
            throw StressFailure("systemd-socket-activate did not start: \(child.output.suffix(5))")
        }
        return SocketActivator(socketPath: socketPath, child: child)
    }

    /// Worker log lines seen so far.
    var output: [String] { child.output }

    /// Accept=no: the process became the worker, which exits by itself when idle.
    func waitForExit() -> Int32 { child.waitForExit() }

    /// Kills it (its SIGTERM handling depends on the signal mask it inherits) and waits for
    /// its output to end, i.e. for every worker and wrapper that shares its stderr to finish.
    func stop() {
        child.signal(SIGKILL)
        _ = child.waitForExit()
        unlink(socketPath)
    }
}
