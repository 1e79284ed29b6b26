import Foundation

/// A real `nats-server -js` on loopback for one test: its own free port and store directory,
/// started and stopped (or killed and restarted on the same port and store) by the test.
///
/// ```swift
/// guard let server = try NatsServer.startIfInstalled(storeDirectory: dir.path + "/js") else { return }
/// defer { server.stop() }
/// server.url                     // "nats://127.0.0.1:PORT"
/// server.kill9(); try server.restart()
/// // with `monitoring: true`: its HTTP monitoring port, read with `NatsMonitor`
/// ```
public final class NatsServer: @unchecked Sendable {
    public static let executable = "/usr/sbin/nats-server"
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }
    public static let skipMessage = "nats-server is not installed (make deps installs it): relay tests skipped"

    public let port: Int
    /// Holds `port` (and a cluster port) for this server's whole life, so that no other
    /// process is handed it while the server starts or lies killed (see `PortReservation`).
    private let reservations: [PortReservation]
    public let storeDirectory: String
    /// Cluster options (`NatsCluster`), empty for a single node.
    public let extraArguments: [String]
    public let name: String
    /// The HTTP monitoring port (`-m`), when prepared with `monitoring: true`.
    public let monitorPort: Int?
    private let lock = NSLock()
    private var process: LoggedProcess?

    public var url: String { "nats://127.0.0.1:\(port)" }
    /// The same server as a `tls://` relay (started with `--tls --tlscert … --tlskey …`).
    public var tlsURL: String { "tls://127.0.0.1:\(port)" }
    /// The process id of the running server (nil when stopped).
    public var pid: pid_t? { lock.withLock { process?.pid } }

    private init(port: Int, reservations: [PortReservation], storeDirectory: String, name: String?,
                 extraArguments: [String], monitorPort: Int?) {
        self.port = port
        self.monitorPort = monitorPort
        self.reservations = reservations
        self.storeDirectory = storeDirectory
        self.name = name ?? "sotto-test-\(port)"
        self.extraArguments = extraArguments
    }

    /// A server that is not started yet (a test that starts its client first). Without `port`
    /// its port is reserved until `stop()`; `reservations` holds further ports it will listen on.
    /// `monitoring`: also serve nats-server's HTTP monitoring (`/connz`, `/jsz`) on a reserved port.
    public static func prepare(storeDirectory: String, port: Int? = nil, name: String? = nil,
                               extraArguments: [String] = [], reservations: [PortReservation] = [],
                               monitoring: Bool = false) throws -> NatsServer {
        let own = try port == nil ? [PortReservation()] : []
        let monitor = try monitoring ? [PortReservation()] : []
        return NatsServer(port: port ?? own[0].port, reservations: own + monitor + reservations, storeDirectory: storeDirectory,
                          name: name, extraArguments: extraArguments + monitor.flatMap { ["-m", String($0.port)] },
                          monitorPort: monitor.first?.port)
    }

    /// Starts a server and waits until it accepts clients.
    public static func start(storeDirectory: String) throws -> NatsServer {
        let server = try prepare(storeDirectory: storeDirectory)
        try server.restart()
        return server
    }

    /// Starts (again) on the same port and store directory; returns once it listens for
    /// clients and, in a cluster, for routes. "Server is ready" alone is not enough: the route
    /// listener opens after it, and a failure there ends the process (a node that said ready,
    /// then refused every client).
    public func restart() throws {
        let launched = try LoggedProcess.launch(Self.executable, [
            "-js", "-a", "127.0.0.1", "-p", String(port), "-sd", storeDirectory, "-n", name,
        ] + extraArguments + Self.debugArguments,
            environment: ["PATH": "/usr/bin:/bin"])
        let ready = ["Server is ready"] + (extraArguments.contains("--cluster") ? ["Listening for route connections on"] : [])
        guard ready.allSatisfy({ launched.waitForLine(containing: $0, timeout: 30) }) else {
            launched.signal(SIGKILL)
            _ = launched.waitForExit()
            throw LoggedProcess.Failure(description: "nats-server \(name) did not start: \(launched.output.suffix(5))")
        }
        lock.withLock { process = launched }
    }

    /// SIGKILL, as a crash: whatever the server had acked is on its store (page cache) already.
    public func kill9() {
        guard let running = lock.withLock({ () -> LoggedProcess? in defer { process = nil }; return process }) else { return }
        running.signal(SIGKILL)
        _ = running.waitForExit()
    }

    /// SIGTERM and wait. The ports stay reserved until the server object goes.
    public func stop() {
        guard let running = lock.withLock({ () -> LoggedProcess? in defer { process = nil }; return process }) else { return }
        running.signal(SIGTERM)
        _ = running.waitForExit()
    }

    public var log: [String] { lock.withLock { process?.output ?? [] } }

    /// `SOTTO_TEST_NATS_DEBUG=1`: `-D` (why a client was refused); `trace`: `-DV` (every protocol line).
    static var debugArguments: [String] {
        switch ProcessInfo.processInfo.environment["SOTTO_TEST_NATS_DEBUG"] {
        case "1": ["-D"]
        case "trace": ["-DV"]
        default: []
        }
    }

    /// A line of the server's log worth showing when a test fails: an error, or why it refused
    /// a client (nats-server says why only in debug lines: `SOTTO_TEST_NATS_DEBUG=1` adds `-D`).
    public static func isProblemLine(_ line: String) -> Bool {
        !line.contains("Authenticated JWT")
            && ["[ERR]", "[WRN]", "Authorization", "authentication", "JWT", "Signature", "nonce"].contains { line.contains($0) }
    }

    /// A port the kernel just handed out on 127.0.0.1 (bound, then released: another process
    /// may get it before the caller binds it; a server's port is a `PortReservation`).
    public static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LoggedProcess.Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw LoggedProcess.Failure(description: "bind: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Three nats-server nodes on loopback routed to each other (one JetStream cluster), for R3
/// streams: a publish is acked after two of three stored it.
///
/// ```swift
/// let cluster = try NatsCluster.start(directory: dir.path)
/// defer { cluster.stop() }
/// cluster.nodes[0].url; cluster.node(named: leaderName)?.kill9()
/// ```
public final class NatsCluster: @unchecked Sendable {
    public let nodes: [NatsServer]

    private init(nodes: [NatsServer]) { self.nodes = nodes }

    public static func start(directory: String) throws -> NatsCluster {
        // Every node needs the others' route ports before any of them listens: reserved, so
        // nothing else on the machine can take one meanwhile (it did, once: a node said ready,
        // then died on "Error listening on router port").
        let clusterPorts = try (0..<3).map { _ in try PortReservation() }
        let routes = clusterPorts.map { "nats://127.0.0.1:\($0.port)" }.joined(separator: ",")
        let nodes = try (0..<3).map { index in
            try NatsServer.prepare(storeDirectory: directory + "/node\(index)", name: "node\(index)", extraArguments: [
                "--cluster_name", "sotto-test", "--cluster", "nats://127.0.0.1:\(clusterPorts[index].port)", "--routes", routes,
            ], reservations: [clusterPorts[index]])
        }
        do {
            for node in nodes { try node.restart() }
        } catch {
            for node in nodes { node.stop() }
            throw error
        }
        return NatsCluster(nodes: nodes)
    }

    public func node(named name: String) -> NatsServer? { nodes.first { $0.name == name } }

    public func stop() {
        for node in nodes { node.stop() }
    }
}

/// A loopback port held for a server that will listen on it: a socket bound to 127.0.0.1 with
/// `SO_REUSEADDR` and never listening. The kernel then hands the port to no other `bind(0)`
/// and to no outgoing connection, while nats-server (Go sets `SO_REUSEADDR` on its listeners)
/// can still bind and listen on it. A port that is only picked and released can be taken by
/// any process before the server binds it; with parallel tests on a loaded machine that
/// happened to a cluster node's route port.
///
/// ```swift
/// let reserved = try PortReservation()
/// // start a server with "--cluster nats://127.0.0.1:\(reserved.port)"; keep `reserved` alive
/// ```
public final class PortReservation: @unchecked Sendable {
    public let port: Int
    private let fd: Int32

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw LoggedProcess.Failure(description: "socket: errno \(errno)") }
        var yes: Int32 = 1
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size)) == 0
            && withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 && getsockname(fd, $0, &length) == 0
                }
            }
        guard bound else {
            let error = errno
            close(fd)
            throw LoggedProcess.Failure(description: "reserve a loopback port: errno \(error)")
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}
