import Foundation
import SharedStore
import SottoCrypto
import SottoWire

/// One Sotto device on this machine for end-to-end tests: its own group and runtime
/// directories, a real `sotto daemon`, and its push socket served by
/// `systemd-socket-activate --accept` running the real `sotto-notify`. The CLI is the real
/// `sotto` binary talking to the daemon's control socket.
///
/// ```swift
/// let tmp = try TemporaryDirectory(prefix: "msg")
/// let alice = try Device.start("alice", in: tmp.path)
/// defer { alice.stop() }
/// let created = try alice.json(["new", "--name", "Trip"])
/// try alice.waitUntil("daemon answers") { try alice.cli(["status"]).status == 0 }
/// ```
public final class Device: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
        public init(message: String) { self.message = message }
    }

    public let name: String
    public let root: String
    public let group: GroupDirectory
    public var runtime: RuntimeDirectory { RuntimeDirectory(path: root + "/run") }
    public var endpoint: String { "unix:" + runtime.pushSocketPath }
    public var daemonLogPath: String { root + "/daemon.log" }
    public let environment: [String: String]
    /// After `daemon` on every start (e.g. `--capacity 2`).
    public let daemonArguments: [String]
    private var daemon: SpawnedProcess?
    private var push: PushSocketServer?

    private init(name: String, root: String, group: GroupDirectory, environment: [String: String], daemonArguments: [String]) {
        self.name = name
        self.root = root
        self.group = group
        self.environment = environment
        self.daemonArguments = daemonArguments
    }

    /// Creates the directories, starts the daemon and the push socket, and waits until the
    /// daemon answers `status`. `groupIn`: a directory to hold the group directory instead of
    /// the device's own (a test file system's mount).
    /// `waitForDaemon` false: the daemon is launched, not waited for (see `launchDaemon`).
    public static func start(_ name: String, in parent: String, environment extra: [String: String] = [:],
                             groupIn: String? = nil, waitForDaemon: Bool = true,
                             daemonArguments: [String] = []) throws -> Device {
        let root = parent + "/" + name
        let group = GroupDirectory(path: (groupIn ?? root) + "/group")
        let environment = [
            "SOTTO_GROUP_DIR": group.path, "SOTTO_RUNTIME_DIR": root + "/run",
            // Tests ask for the key file; the keyring tests pass SOTTO_KEY_STORE=keyring (docs/adr/0045).
            "SOTTO_KEY_STORE": "file",
        ].merging(extra) { $1 }
        let device = Device(name: name, root: root, group: group, environment: environment, daemonArguments: daemonArguments)
        for path in [root, group.path, root + "/run"] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        if waitForDaemon { try device.startDaemon() } else { try device.launchDaemon() }
        try device.startPushSocket()
        return device
    }

    // MARK: - Processes

    /// The running daemon's pid (for /proc measurements), nil when it is stopped.
    public var daemonPID: Int32? { daemon.flatMap { $0.isRunning ? $0.processIdentifier : nil } }

    /// `extra` adds to this run of the daemon only (e.g. `SOTTO_CRASH_AT`), not to the CLI.
    public func startDaemon(environment extra: [String: String] = [:]) throws {
        let process = try launchDaemon(environment: extra)
        // Alone a daemon answers in about 0.2 s. The bound is for a daemon that never will:
        // one that exits fails at once, and a full suite on 2 cores once kept a live one
        // from answering for over 30 s (CI of 2026-11-25), so a live one gets 2 minutes.
        try waitUntil("\(name)'s daemon answers status", timeoutMs: 120_000) {
            guard process.isRunning else { throw Failure(message: "\(name)'s daemon exited: \(self.daemonLog)") }
            return try self.cli(["status"]).status == 0
        }
    }

    /// Starts the daemon without waiting for it to serve (one waiting for a locked keyring
    /// never answers `status` with 0 until it is unlocked).
    @discardableResult
    public func launchDaemon(environment extra: [String: String] = [:]) throws -> SpawnedProcess {
        let process = try SpawnedProcess.launch(try builtExecutable("sotto"), ["daemon"] + daemonArguments,
                                                environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }
                                                    .merging(extra) { $1 },
                                                log: daemonLogPath)
        daemon = process
        return process
    }

    /// Whether the daemon started by `startDaemon` is still alive.
    public var daemonIsRunning: Bool { daemon?.isRunning ?? false }

    /// How the daemon's last run ended: the signal that killed it, or nil while it runs or
    /// after a plain exit.
    public var daemonKillSignal: Int32? {
        guard let daemon, !daemon.isRunning, daemon.terminationReason == .uncaughtSignal else { return nil }
        return daemon.terminationStatus
    }

    /// SIGTERM and wait (a clean stop), or `signal` (e.g. SIGKILL: a crash).
    public func stopDaemon(signal: Int32 = SIGTERM) {
        guard let daemon else { return }
        if daemon.isRunning { kill(daemon.processIdentifier, signal) }
        daemon.waitUntilExit()
        self.daemon = nil
    }

    /// `systemd-socket-activate --accept` running the real `sotto-notify` on this device's
    /// push socket, as sotto-push.socket would.
    /// `extra` adds to this push socket's workers only (e.g. `SOTTO_CRASH_AT`).
    public func startPushSocket(environment extra: [String: String] = [:]) throws {
        push = try PushSocketServer.start(socketPath: runtime.pushSocketPath, accept: true,
                                          command: [try builtExecutable("sotto-notify")],
                                          environment: environment.merging(extra) { $1 })
    }

    /// What the push socket's workers printed so far.
    public var pushLog: String { push?.log ?? "" }

    /// Takes the push socket away: senders find the endpoint unreachable.
    public func stopPushSocket() {
        push?.stop()
        push = nil
    }

    public func stop() {
        stopPushSocket()
        stopDaemon()
    }

    deinit { stop() }

    public var daemonLog: String { (try? String(contentsOfFile: daemonLogPath, encoding: .utf8)) ?? "" }

    // MARK: - CLI

    /// Runs `sotto ARGS` against this device.
    public func cli(_ arguments: [String], stdin: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        try ChildProcess.run(try builtExecutable("sotto"), arguments, environment: environment, stdin: stdin)
    }

    /// Runs `sotto ARGS --json`; throws unless it exits 0 with a JSON object.
    public func json(_ arguments: [String]) throws -> [String: Any] {
        let result = try cli(arguments + ["--json"])
        guard result.status == 0,
              let object = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] else {
            throw Failure(message: "\(name): sotto \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
        }
        return object
    }

    /// `sotto read` as message objects (empty when the conversation is unknown here).
    public func messages(_ conversation: String) -> [[String: Any]] {
        ((try? json(["read", conversation, "--limit", "500"]))?["messages"] as? [[String: Any]]) ?? []
    }

    /// `sotto ls` as conversation objects.
    public func conversations() throws -> [[String: Any]] {
        try json(["ls"])["conversations"] as? [[String: Any]] ?? []
    }

    public func conversation(_ id: String) throws -> [String: Any]? {
        try conversations().first { $0["id"] as? String == id }
    }

    // MARK: - Database (read-only look-ups, each on its own short-lived connection)

    public func query(_ sql: String, _ binds: [SQLiteValue] = []) throws -> [Row] {
        let conn = try SQLiteConnection.open(path: group.databasePath, profile: .worker)
        return try conn.query(sql, binds)
    }

    // MARK: - Waiting

    /// Polls `condition` until it is true; throws when `timeoutMs` passes first.
    public func waitUntil(_ what: String, timeoutMs: Int64 = 20_000, _ condition: () throws -> Bool) throws {
        let deadline = WallClock.nowMs() + timeoutMs
        while true {
            if try condition() { return }
            if WallClock.nowMs() > deadline { throw Failure(message: "timed out waiting for: \(what)") }
            usleep(20_000)
        }
    }

    // MARK: - Files

    /// True when any file under the group directory (database, WAL, shm, keystore) holds
    /// `needle`'s bytes.
    public func groupFilesContain(_ needle: [UInt8]) throws -> Bool {
        !FileSearch.files(containing: needle, under: group.path).isEmpty
    }
}
