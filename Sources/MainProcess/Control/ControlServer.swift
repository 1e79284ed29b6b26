import SharedStore
import Foundation

/// The daemon's control socket (`$XDG_RUNTIME_DIR/sotto/control.sock`, mode 0600): accepts
/// CLI clients, checks each peer's uid with `SO_PEERCRED`, and serves JSON-RPC lines, one
/// thread per connection (clients are few; blocking I/O keeps the code plain).
///
/// ```swift
/// let server = try ControlServer.listen(path: runtime.controlSocketPath, handler: dispatcher)
/// server.start()
/// …
/// server.stop()
/// ```
final class ControlServer: @unchecked Sendable {
    let path: String
    private let listenFD: Int32
    private let handler: any ControlRequestHandler
    private let lock = NSLock()
    private var connections: [ObjectIdentifier: ControlConnection] = [:]
    private var stopped = false

    private init(path: String, listenFD: Int32, handler: any ControlRequestHandler) {
        self.path = path
        self.listenFD = listenFD
        self.handler = handler
    }

    enum Failure: Error, CustomStringConvertible {
        case socket(String)
        var description: String { if case .socket(let text) = self { return text }; return "" }
    }

    static func listen(path: String, handler: any ControlRequestHandler) throws -> ControlServer {
        // A stale socket from a previous run is replaced: the daemon holds the instance lock.
        let fd = UnixSocket.bind(path, type: Int32(SOCK_STREAM.rawValue))
        guard fd >= 0 else { throw Failure.socket("bind \(path): \(String(cString: strerror(errno)))") }
        guard Glibc.listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            throw Failure.socket("listen \(path): errno \(code)")
        }
        return ControlServer(path: path, listenFD: fd, handler: handler)
    }

    func start() {
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "control-accept"
        thread.start()
    }

    /// Stops accepting, closes every client connection, removes the socket file.
    func stop() {
        lock.lock()
        stopped = true
        let open = Array(connections.values)
        lock.unlock()
        shutdown(listenFD, Int32(SHUT_RDWR))
        close(listenFD)
        for connection in open { connection.close() }
        unlink(path)
    }

    /// Sends a notification line to every connection that subscribed.
    func broadcast(_ make: (ControlConnection) -> String?) {
        lock.lock()
        let open = Array(connections.values)
        lock.unlock()
        for connection in open {
            if let line = make(connection) { connection.send(line) }
        }
    }

    private func acceptLoop() {
        while true {
            let fd = UnixSocket.accept(listenFD, nonBlocking: false)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return  // closed by stop()
            }
            guard Self.peerUID(fd) == geteuid() else {
                let line = JSONRPC.errorLine(id: nil, .refused("permission denied: peer is another user"))
                _ = line.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                Glibc.close(fd)
                continue
            }
            let connection = ControlConnection(fd: fd)
            lock.lock()
            if stopped {
                lock.unlock()
                connection.close()
                return
            }
            connections[ObjectIdentifier(connection)] = connection
            lock.unlock()
            let thread = Thread { [self] in
                serve(connection)
                lock.lock()
                connections[ObjectIdentifier(connection)] = nil
                lock.unlock()
                handler.connectionClosed(connection)
                connection.close()
            }
            thread.name = "control-client"
            thread.start()
        }
    }

    private func serve(_ connection: ControlConnection) {
        var reader = LineReader(fd: connection.fd, maxLineBytes: JSONRPC.maxLineBytes)
        while true {
            switch reader.next() {
            case .end:
                return
            case .tooLong:
                connection.send(JSONRPC.errorLine(id: nil, .lineTooLong))
            case .line(let data):
                if data.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0d }) { continue }
                switch JSONRPC.parse(data) {
                case .invalid(let errorLine):
                    connection.send(errorLine)
                case .request(let request):
                    let reply = BlockingAwait.run { await self.handler.handle(request, on: connection) }
                    if request.hasID { connection.send(reply) }
                }
            }
        }
    }

    private static func peerUID(_ fd: Int32) -> uid_t? {
        UnixSocket.peerCredentials(fd)?.uid
    }
}

/// What answers control requests: the daemon's method dispatcher.
protocol ControlRequestHandler: Sendable {
    /// Returns the full response line (result or error) for `request`.
    func handle(_ request: JSONRPC.Request, on connection: ControlConnection) async -> String
    func connectionClosed(_ connection: ControlConnection)
}

/// One client of the control socket. `send` is safe from any thread (a subscription's
/// events and replies interleave line by line, never mid-line).
final class ControlConnection: @unchecked Sendable {
    let fd: Int32
    private let lock = NSLock()
    private var closed = false

    init(fd: Int32) { self.fd = fd }

    @discardableResult
    func send(_ line: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return false }
        return UnixSocket.sendAll(fd, Array(line.utf8))
    }

    func close() {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        closed = true
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }
}

/// Reads LF-terminated lines from a blocking fd with a bound on line length; an over-long
/// line is reported once and discarded up to its LF.
struct LineReader {
    enum Item { case line(Data), tooLong, end }

    let fd: Int32
    let maxLineBytes: Int
    private var buffer = Data()
    private var discarding = false

    init(fd: Int32, maxLineBytes: Int) {
        self.fd = fd
        self.maxLineBytes = maxLineBytes
    }

    mutating func next() -> Item {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if let newline = buffer.firstIndex(of: 0x0a) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[(newline + 1)...])
                if discarding {
                    discarding = false
                    continue
                }
                return .line(Data(line))
            }
            if buffer.count > maxLineBytes {
                buffer.removeAll(keepingCapacity: false)
                if !discarding {
                    discarding = true
                    return .tooLong
                }
            }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return .end }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }
}

/// Runs async work from a plain (non-cooperative) thread and waits for it. Only for the
/// control socket's per-connection threads, which exist to block.
enum BlockingAwait {
    static func run<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
        let box = ResultBox<T>()
        let semaphore = DispatchSemaphore(value: 0)
        Task {
            box.value = await work()
            semaphore.signal()
        }
        semaphore.wait()
        return box.value!
    }

    private final class ResultBox<T>: @unchecked Sendable {
        var value: T?
    }
}
