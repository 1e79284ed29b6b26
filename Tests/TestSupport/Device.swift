import Foundation
import SharedStore

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
    public var group: GroupDirectory { GroupDirectory(path: root + "/group") }
    public var runtime: RuntimeDirectory { RuntimeDirectory(path: root + "/run") }
    public var endpoint: String { "unix:" + runtime.pushSocketPath }
    public var daemonLogPath: String { root + "/daemon.log" }
    public let environment: [String: String]
    private var daemon: Process?
    private var push: SpawnedProcess?

    private init(name: String, root: String, environment: [String: String]) {
        self.name = name
        self.root = root
        self.environment = environment
    }

    /// Creates the directories, starts the daemon and the push socket, and waits until the
    /// daemon answers `status`.
    public static func start(_ name: String, in parent: String, environment extra: [String: String] = [:]) throws -> Device {
        let root = parent + "/" + name
        let environment = [
            "SOTTO_GROUP_DIR": root + "/group", "SOTTO_RUNTIME_DIR": root + "/run",
        ].merging(extra) { $1 }
        let device = Device(name: name, root: root, environment: environment)
        for path in [root, root + "/group", root + "/run"] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        try device.startDaemon()
        try device.startPushSocket()
        return device
    }

    // MARK: - Processes

    public func startDaemon() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try builtExecutable("sotto"))
        process.arguments = ["daemon"]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if !FileManager.default.fileExists(atPath: daemonLogPath) {
            FileManager.default.createFile(atPath: daemonLogPath, contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: daemonLogPath))
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        daemon = process
        try waitUntil("\(name)'s daemon answers status", timeoutMs: 30_000) {
            guard process.isRunning else { throw Failure(message: "\(name)'s daemon exited: \(self.daemonLog)") }
            return try self.cli(["status"]).status == 0
        }
    }

    /// SIGTERM and wait (a clean stop), or `signal` (e.g. SIGKILL: a crash).
    public func stopDaemon(signal: Int32 = SIGTERM) {
        guard let daemon else { return }
        if daemon.isRunning { kill(daemon.processIdentifier, signal) }
        daemon.waitUntilExit()
        self.daemon = nil
    }

    /// `systemd-socket-activate --accept` running `sotto-notify`, spawned with posix_spawn:
    /// it closes the descriptors it inherits, which Foundation's `Process` takes for an exit
    /// (its reaper thread then blocks in waitpid and no other child is ever reaped).
    public func startPushSocket() throws {
        let socketPath = runtime.pushSocketPath
        var arguments = ["/usr/bin/systemd-socket-activate", "-l", socketPath, "--accept"]
        for (key, value) in environment.sorted(by: { $0.key < $1.key }) { arguments += ["-E", "\(key)=\(value)"] }
        arguments.append(try builtExecutable("sotto-notify"))
        let process = try SpawnedProcess(arguments, logPath: root + "/push.log")
        push = process
        try waitUntil("\(name)'s push socket accepts", timeoutMs: 10_000) {
            guard process.isRunning else { throw Failure(message: "systemd-socket-activate exited") }
            guard let fd = try? PushClient.connect(to: socketPath) else { return false }
            close(fd)  // an empty connection: the worker answers malformed_payload and exits
            return true
        }
    }

    /// Takes the push socket away: senders find the endpoint unreachable.
    public func stopPushSocket() {
        push?.stop()
        push = nil
        unlink(runtime.pushSocketPath)
    }

    public func stop() {
        stopPushSocket()
        stopDaemon()
    }

    deinit { stop() }

    public var daemonLog: String { (try? String(contentsOfFile: daemonLogPath, encoding: .utf8)) ?? "" }

    // MARK: - CLI

    /// Runs `sotto ARGS` against this device.
    public func cli(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try ChildProcess.run(try builtExecutable("sotto"), arguments, environment: environment)
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
        guard let walker = FileManager.default.enumerator(atPath: group.path) else { return false }
        for case let relative as String in walker {
            let path = group.path + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  let data = FileManager.default.contents(atPath: path) else { continue }
            if data.range(of: Data(needle)) != nil { return true }
        }
        return false
    }
}

/// A child started with posix_spawn (stdin /dev/null, stdout and stderr appended to a log
/// file), stopped with SIGTERM and reaped with waitpid.
final class SpawnedProcess: @unchecked Sendable {
    let pid: pid_t
    private var exited = false

    init(_ arguments: [String], logPath: String) throws {
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
        guard rc == 0 else { throw Device.Failure(message: "posix_spawn \(arguments[0]): error \(rc)") }
        pid = child
    }

    var isRunning: Bool {
        if exited { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exited = true }
        return !exited
    }

    func stop() {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        exited = true
    }

    deinit { stop() }
}
