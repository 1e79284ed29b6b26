import Foundation
import SharedStore

/// Where one test's daemon keeps its data and sockets: `<tmp>/group` and `<tmp>/run`, short
/// enough for socket paths, removed with the temporary directory. Several daemon runs
/// (restarts) share one home.
///
/// ```swift
/// let home = try DaemonHome()
/// let daemon = try DaemonProcess.start(home: home)
/// ```
public final class DaemonHome: @unchecked Sendable {
    public let tmp: TemporaryDirectory
    public var groupPath: String { tmp.path + "/group" }
    public var runtimePath: String { tmp.path + "/run" }
    public var controlSocketPath: String { runtimePath + "/control.sock" }
    public var eventsSocketPath: String { runtimePath + "/events.sock" }
    public var databasePath: String { groupPath + "/shared.sqlite" }
    public var keystorePath: String { groupPath + "/keystore" }
    private var runs = 0

    public init() throws {
        tmp = try TemporaryDirectory(prefix: "sotto-d")
    }

    /// The variables a `sotto` or `sotto-notify` process needs to find this home.
    public var environment: [String: String] {
        ["SOTTO_GROUP_DIR": groupPath, "SOTTO_RUNTIME_DIR": runtimePath, "SOTTO_KEY_STORE": "file"]
    }

    func nextRun() -> Int {
        runs += 1
        return runs
    }
}

/// The real `sotto daemon`, started as systemd would start a `Type=notify` service: with
/// `NOTIFY_SOCKET` pointing at a datagram socket this test bound. `start` returns once
/// `READY=1` arrived there; `stop` sends SIGTERM and waits for `STOPPING=1` and the exit.
/// The daemon's stderr (its log) goes to a file in the home, printed by `log`.
///
/// ```swift
/// let daemon = try DaemonProcess.start(home: home, capacity: 1)
/// let status = try daemon.call("status")["result"] as! [String: Any]
/// #expect(try daemon.stop() == 0)
/// ```
public final class DaemonProcess: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public let home: DaemonHome
    public let process: SpawnedProcess
    public let notify: NotifySocket
    public let logPath: String
    /// The `READY=1` datagram (with its `STATUS=` line).
    public private(set) var readyMessage = ""
    private var client: ControlSocketClient?

    private init(home: DaemonHome, process: SpawnedProcess, notify: NotifySocket, logPath: String) {
        self.home = home
        self.process = process
        self.notify = notify
        self.logPath = logPath
    }

    public var pid: Int32 { process.processIdentifier }

    /// Starts `sotto daemon` on `home` and waits for `READY=1` (throws if it exits first or
    /// does not get ready within `timeout` seconds). `environment` adds to what the daemon
    /// inherits (e.g. `WATCHDOG_USEC`).
    public static func start(home: DaemonHome, capacity: Int? = nil, environment: [String: String] = [:],
                             timeout: Double = 60) throws -> DaemonProcess {
        let daemon = try launch(home: home, capacity: capacity, environment: environment)
        do {
            daemon.readyMessage = try daemon.notify.waitFor("READY=1", timeout: timeout) { daemon.process.isRunning }
        } catch {
            daemon.process.terminate()
            daemon.process.waitUntilExit()
            throw Failure(description: "daemon not ready (\(error)); exit \(daemon.process.terminationStatus); log:\n\(daemon.log)")
        }
        return daemon
    }

    /// Starts the daemon without waiting for anything (for refusal tests: wait with `waitForExit`).
    public static func launch(home: DaemonHome, capacity: Int? = nil, environment: [String: String] = [:]) throws -> DaemonProcess {
        let run = home.nextRun()
        let notify = try NotifySocket(path: home.tmp.path + "/notify-\(run).sock")
        let logPath = home.tmp.path + "/daemon-\(run).log"
        var arguments = ["daemon"]
        if let capacity { arguments += ["--capacity", String(capacity)] }
        var inherited = ProcessInfo.processInfo.environment
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "CREDENTIALS_DIRECTORY"] {
            inherited[name] = nil
        }
        let process = try SpawnedProcess.launch(try builtExecutable("sotto"), arguments,
                                                environment: inherited.merging(home.environment) { $1 }
                                                    .merging(["NOTIFY_SOCKET": notify.path]) { $1 }
                                                    .merging(environment) { $1 },
                                                log: logPath)
        return DaemonProcess(home: home, process: process, notify: notify, logPath: logPath)
    }

    /// What the daemon logged so far.
    public var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    // MARK: Control socket

    /// A new connection to the control socket.
    public func connect() throws -> ControlSocketClient {
        try ControlSocketClient(path: home.controlSocketPath)
    }

    /// One request over a connection kept for this daemon; the whole response object.
    public func call(_ method: String, _ params: [String: Any] = [:]) throws -> [String: Any] {
        if client == nil { client = try connect() }
        return try client!.call(method, params)
    }

    /// The `result` of one request; throws with the daemon's error when it refused.
    public func result(_ method: String, _ params: [String: Any] = [:]) throws -> [String: Any] {
        if client == nil { client = try connect() }
        return try client!.result(method, params)
    }

    /// Polls `status` until `condition` holds or `timeout` seconds pass: a wait on the
    /// daemon's own state, for effects of background work (checkpoints, refills).
    @discardableResult
    public func waitForStatus(timeout: Double = 30, _ condition: ([String: Any]) -> Bool) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        var status: [String: Any] = [:]
        repeat {
            status = try result("status")
            if condition(status) { return status }
            _ = notify.next(timeout: 0.05)  // paces the poll on a real socket, never a bare sleep
        } while deadline.timeIntervalSinceNow > 0
        throw Failure(description: "status never met the condition within \(timeout) s; last: \(status)")
    }

    // MARK: Stopping

    /// SIGTERM, then waits for `STOPPING=1` and the exit; returns the exit status.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeout: Double = 60) throws -> Int32 {
        client = nil
        guard process.isRunning else { return waitForExit() }
        Foundation.kill(process.processIdentifier, signal)
        try notify.waitFor("STOPPING=1", timeout: timeout) { process.isRunning }
        return waitForExit()
    }

    public func waitForExit() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Kills the daemon if a test ended without stopping it.
    public func kill() {
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { kill() }
}
