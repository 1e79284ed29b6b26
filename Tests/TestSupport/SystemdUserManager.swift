import Foundation

/// A real `systemd --user` manager for a fresh test user (uid `uid`, home `home` bound as
/// /home/sotto-test), inside a private mount namespace made by
/// `scripts/systemd-user-sandbox.sh` (docs/platform-notes.md says what it builds). Needs
/// root; `start` returns nil with the reason when the namespace cannot be made here.
/// Everything it started is stopped, and its cgroup dirs removed, when `stop()` runs or
/// this process dies (the script waits for its stdin to close).
///
/// ```swift
/// let (started, skipReason) = try SystemdUserManager.start(uid: 61010)
/// guard let manager = started else { print("skipped: \(skipReason ?? "")"); return }
/// defer { manager.stop() }
/// let state = try manager.user(["systemctl", "--user", "is-active", "sotto.service"])
/// ```
public final class SystemdUserManager: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public static let script = PackagePaths.root.appendingPathComponent("scripts/systemd-user-sandbox.sh").path
    public static let userName = "sotto-test"
    public static let homeInside = "/home/sotto-test"

    /// One manager at a time in a test process: the relay and install suites each start one,
    /// and two starting together on a loaded machine once both failed to see their manager's
    /// socket within the script's deadline. Taken in `start`, given back in `stop`.
    private static let oneAtATime = DispatchSemaphore(value: 1)

    public let uid: UInt32
    /// The user's home as this process sees it (a temporary directory, owned by `uid`).
    public let home: TemporaryDirectory
    /// A process inside the namespace (for `nsenter`, and `/proc/PID/root/...` paths).
    public let namespacePid: Int32
    private let process: LoggedProcess
    private let lock = NSLock()
    private var stopped = false

    private init(uid: UInt32, home: TemporaryDirectory, namespacePid: Int32, process: LoggedProcess) {
        self.uid = uid
        self.home = home
        self.namespacePid = namespacePid
        self.process = process
    }

    /// Starts the manager; nil (and `skipReason`) when this machine cannot make the sandbox.
    /// `managerCredentials`: a directory whose files the manager receives as its own
    /// credentials, as PID 1 hands them to user@UID.service.
    public static func start(uid: UInt32, managerCredentials: String? = nil) throws -> (manager: SystemdUserManager?, skipReason: String?) {
        oneAtATime.wait()
        do {
            let started = try launch(uid: uid, managerCredentials: managerCredentials)
            if started.manager == nil { oneAtATime.signal() }
            return started
        } catch {
            oneAtATime.signal()
            throw error
        }
    }

    private static func launch(uid: UInt32, managerCredentials: String?) throws -> (manager: SystemdUserManager?, skipReason: String?) {
        let home = try TemporaryDirectory(prefix: "sotto-home")
        guard chown(home.path, uid, uid) == 0 else { throw Failure(description: "chown \(home.path): errno \(errno)") }
        let process = try LoggedProcess.launch(script, ["start", home.path, String(uid)] + (managerCredentials.map { [$0] } ?? []),
                                               environment: ProcessInfo.processInfo.environment)
        // The script waits up to 30 s for journald and 60 s for the manager (a loaded machine).
        let ready = process.waitForLine(containing: "READY pid=", timeout: 100)
        let lines = process.output
        if !ready {
            process.closeStdin()
            _ = process.waitForExit()
            if let skip = lines.first(where: { $0.hasPrefix("SKIP: ") }) { return (nil, String(skip.dropFirst(6))) }
            throw Failure(description: "systemd-user-sandbox.sh did not start: \(lines.suffix(10))")
        }
        let line = lines.first { $0.hasPrefix("READY pid=") }!
        guard let pid = Int32(line.dropFirst("READY pid=".count)) else { throw Failure(description: line) }
        return (SystemdUserManager(uid: uid, home: home, namespacePid: pid, process: process), nil)
    }

    /// Runs `command` as the test user inside the namespace, with the environment a login
    /// session has (HOME, XDG_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS, PATH).
    public func user(_ command: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try ChildProcess.run(Self.script, ["user", String(namespacePid), String(uid)] + command, directory: "/")
    }

    /// Runs `command` as root inside the namespace (journalctl, looking at /run).
    public func root(_ command: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try ChildProcess.run(Self.script, ["root", String(namespacePid)] + command, directory: "/")
    }

    /// `systemctl --user ARGS` as the test user; stdout trimmed.
    public func systemctl(_ arguments: [String]) throws -> String {
        try user(["systemctl", "--user"] + arguments).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A path inside the namespace, as this process can reach it.
    public func outsidePath(_ inside: String) -> String {
        "/proc/\(namespacePid)/root" + inside
    }

    public var runtimeDirectory: String { "/run/user/\(uid)" }

    /// Stops the manager and everything in the user's cgroup, removes the cgroup dirs.
    public func stop() {
        let first = lock.withLock {
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        process.closeStdin()
        _ = process.waitForExit()
        Self.oneAtATime.signal()
    }

    deinit { stop() }
}
