import Foundation

/// A child started with posix_spawn (stdin /dev/null, stdout and stderr appended to a log
/// file), stopped with SIGTERM and reaped with waitpid.
public final class SpawnedProcess: @unchecked Sendable {
    public let pid: pid_t
    private var exited = false
    private var exitStatus: Int32?

    public init(_ arguments: [String], logPath: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        // Test threads (dispatch workers) block signals, and a spawned child inherits the
        // mask: unblock everything and restore default dispositions so SIGTERM stops it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var child: pid_t = 0
        let rc = posix_spawn(&child, arguments[0], &actions, &attributes, argv, envp)
        guard rc == 0 else { throw PushClient.Failure(message: "posix_spawn \(arguments[0]): error \(rc)") }
        pid = child
    }

    public var isRunning: Bool {
        if exited { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { record(status) }
        return !exited
    }

    /// SIGTERM, then waits for the exit.
    public func stop() {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        _ = waitForExit()
    }

    /// Waits for the process to exit by itself; its exit status (128+N if killed by signal N).
    public func waitForExit() -> Int32 {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return record(status)
    }

    @discardableResult
    private func record(_ status: Int32) -> Int32 {
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        exited = true
        exitStatus = code
        return code
    }

    deinit { stop() }
}
