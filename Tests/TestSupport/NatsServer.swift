import Foundation

/// A real `nats-server -js` on loopback for one test: its own free port and store directory,
/// started and stopped (or killed and restarted on the same port and store) by the test.
///
/// ```swift
/// guard let server = try NatsServer.startIfInstalled(storeDirectory: dir.path + "/js") else { return }
/// defer { server.stop() }
/// server.url                     // "nats://127.0.0.1:PORT"
/// server.kill9(); try server.restart()
/// ```
public final class NatsServer: @unchecked Sendable {
    public static let executable = "/usr/sbin/nats-server"
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }
    public static let skipMessage = "nats-server is not installed (make deps installs it): relay tests skipped"

    public let port: Int
    public let storeDirectory: String
    private let lock = NSLock()
    private var process: LoggedProcess?

    public var url: String { "nats://127.0.0.1:\(port)" }
    /// The process id of the running server (nil when stopped).
    public var pid: pid_t? { lock.withLock { process?.pid } }

    private init(port: Int, storeDirectory: String) {
        self.port = port
        self.storeDirectory = storeDirectory
    }

    /// A server that is not started yet (a test that starts its client first).
    public static func prepare(storeDirectory: String, port: Int? = nil) throws -> NatsServer {
        NatsServer(port: try port ?? freeLoopbackPort(), storeDirectory: storeDirectory)
    }

    /// Starts a server and waits until it accepts clients.
    public static func start(storeDirectory: String) throws -> NatsServer {
        let server = try prepare(storeDirectory: storeDirectory)
        try server.restart()
        return server
    }

    /// Starts (again) on the same port and store directory; waits for "Server is ready".
    public func restart() throws {
        let launched = try LoggedProcess.launch(Self.executable, [
            "-js", "-a", "127.0.0.1", "-p", String(port), "-sd", storeDirectory, "-n", "sotto-test-\(port)",
        ], environment: ["PATH": "/usr/bin:/bin"])
        guard launched.waitForLine(containing: "Server is ready", timeout: 30) else {
            launched.signal(SIGKILL)
            _ = launched.waitForExit()
            throw LoggedProcess.Failure(description: "nats-server did not start: \(launched.output.suffix(5))")
        }
        lock.withLock { process = launched }
    }

    /// SIGKILL, as a crash: whatever the server had acked is on its store (page cache) already.
    public func kill9() {
        guard let running = lock.withLock({ () -> LoggedProcess? in defer { process = nil }; return process }) else { return }
        running.signal(SIGKILL)
        _ = running.waitForExit()
    }

    public func stop() {
        guard let running = lock.withLock({ () -> LoggedProcess? in defer { process = nil }; return process }) else { return }
        running.signal(SIGTERM)
        _ = running.waitForExit()
    }

    public var log: [String] { lock.withLock { process?.output ?? [] } }

    /// A port the kernel just handed out on 127.0.0.1 (bound, then released).
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
