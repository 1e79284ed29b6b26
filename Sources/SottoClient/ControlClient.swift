import ControlProtocol
import Glibc
import SottoWire

/// A connection to the daemon's control socket, speaking the typed control API of
/// ControlProtocol: what the `sotto` CLI, the tests, the benchmarks and any future UI use.
/// Blocking, one request at a time; not for sharing between threads.
///
/// ```swift
/// let client = try ControlClient.connect(path: runtime.controlSocketPath)
/// let sent = try client.call(SendMessageParams(conversation: "ab12", text: "hello"))   // SentMessage
/// let subscribed = try client.call(SubscribeParams(since: 0))
/// for change in client.changes { print(change.seq, change.kind) }
/// ```
public final class ControlClient {
    // MARK: Failures

    /// Why a call did not return a result; `description` is what the CLI prints after "sotto: ".
    ///
    /// ```swift
    /// catch ControlClient.Failure.rpc(let error) where error.code == .notFound { … }
    /// ```
    public enum Failure: Error, CustomStringConvertible {
        case daemonNotRunning(path: String)
        case permissionDenied(path: String)
        /// The daemon answered with a JSON-RPC error.
        case rpc(JSONRPC.ErrorObject)
        /// The daemon answered something that is not the reply expected, or hung up.
        case protocolError(String)
        /// No reply within the receive timeout given to `connect`.
        case timedOut

        public var description: String {
            switch self {
            case .daemonNotRunning(let path):
                return "the Sotto daemon is not running (no listener on \(path)). Start it with `systemctl --user start sotto` or `sotto daemon`."
            case .permissionDenied(let path):
                return "permission denied on \(path): the control socket (or its directory) belongs to another user"
            case .rpc(let error): return error.message
            case .protocolError(let detail): return "unexpected reply from the daemon: \(detail)"
            case .timedOut: return "no reply from the daemon within the deadline"
            }
        }
    }

    // MARK: Connecting

    public let fd: Int32
    private var reader: LineReader
    private var nextID: Int64 = 1
    /// Notifications that arrived while waiting for a response (a subscription's replay can
    /// overtake the `subscribe` response): `nextChange` delivers them first.
    private var early: [(method: String, params: JSONValue)] = []

    private init(fd: Int32) {
        self.fd = fd
        self.reader = LineReader(fd: fd, maxLineBytes: JSONRPC.maxReplyBytes)
    }

    deinit { close(fd) }

    /// Connects to the control socket; with `receiveTimeoutSeconds`, every read that waits
    /// longer fails with `.timedOut` instead of blocking (tests use it).
    public static func connect(path: String, receiveTimeoutSeconds: Int? = nil) throws(Failure) -> ControlClient {
        let fd = UnixSocket.connect(path)
        guard fd >= 0 else {
            throw errno == EACCES || errno == EPERM ? .permissionDenied(path: path) : .daemonNotRunning(path: path)
        }
        if let receiveTimeoutSeconds {
            var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        return ControlClient(fd: fd)
    }

    /// Stops the connection both ways: a thread blocked reading it sees the end.
    public func shutdown() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    // MARK: Calls

    /// Calls the method `params` belongs to and returns its typed result.
    public func call<P: ControlRequest>(_ params: P) throws(Failure) -> P.Result {
        try callKeepingJSON(params).result
    }

    /// `call`, also returning the result as the daemon wrote it (`sotto --json` prints that,
    /// members this build does not know included).
    public func callKeepingJSON<P: ControlRequest>(_ params: P) throws(Failure) -> (result: P.Result, json: JSONValue) {
        let json: JSONValue
        switch try callRaw(method: P.method.rawValue, params: params.json) {
        case .success(let value): json = value
        case .failure(let error): throw .rpc(error)
        }
        do {
            return (try P.Result(json: json), json)
        } catch {
            throw .protocolError("\(P.method.rawValue) result: \(error.detail)")
        }
    }

    /// Calls any method by name with any params and returns the daemon's answer as it came:
    /// for callers that speak a newer API than this build, and for tests of the daemon's errors.
    public func callRaw(method: String, params: JSONValue) throws(Failure) -> Result<JSONValue, JSONRPC.ErrorObject> {
        let id = nextID
        nextID += 1
        do {
            try sendRaw(Array(JSONRPC.requestLine(id: id, method: method, params: params).utf8))
        } catch {
            // The daemon may have answered and closed before reading the request (a refused
            // peer): its reply is still readable, and says more than "write failed".
            if case .response(_, .failure(let refusal))? = try? readMessage() { throw .rpc(refusal) }
            throw error
        }
        let (answered, outcome) = try readResponse()
        // An error with a null id answers whatever was pending (JSON-RPC 2.0 §5): a refused
        // peer, a line the daemon could not read.
        if answered == .null, case .failure = outcome { return outcome }
        guard answered == .number(id) else { throw .protocolError("a response to another request (\(answered))") }
        return outcome
    }

    /// The next response, keeping the notifications that come before it for `nextChange`.
    public func readResponse() throws(Failure) -> (id: RequestID, outcome: Result<JSONValue, JSONRPC.ErrorObject>) {
        while true {
            switch try readMessage() {
            case .notification(let method, let params): early.append((method, params))
            case .response(let id, let outcome): return (id, outcome)
            }
        }
    }

    // MARK: Notifications

    /// The next `change` notification; nil when the daemon closed the connection.
    public func nextChange() throws(Failure) -> ChangeNotification? {
        while true {
            let method: String
            let params: JSONValue
            if !early.isEmpty {
                (method, params) = early.removeFirst()
            } else {
                do {
                    guard case .notification(let name, let value) = try readMessage() else { continue }
                    (method, params) = (name, value)
                } catch .protocolError(let detail) where detail == Self.closed {
                    return nil
                }
            }
            guard method == ControlNotificationName.change.rawValue else { continue }
            do {
                return try ChangeNotification(json: params)
            } catch {
                throw .protocolError("change notification: \(error.detail)")
            }
        }
    }

    /// The `change` notifications of a subscription on this connection, until the daemon
    /// closes it (or sends something that is not one).
    public var changes: Changes { Changes(client: self) }

    /// A sequence of `change` notifications read from one connection.
    ///
    /// ```swift
    /// for change in client.changes where change.kind == "messageInserted" { … }
    /// ```
    public struct Changes: Sequence, IteratorProtocol {
        let client: ControlClient

        public mutating func next() -> ChangeNotification? { (try? client.nextChange()) ?? nil }
    }

    // MARK: Raw lines

    /// Writes bytes as they are (tests send garbage with it).
    public func sendRaw(_ bytes: [UInt8]) throws(Failure) {
        guard UnixSocket.sendAll(fd, bytes) else { throw .protocolError("write failed: errno \(errno)") }
    }

    /// The next line from the daemon, parsed.
    public func readMessage() throws(Failure) -> JSONRPC.ServerMessage {
        switch reader.next() {
        case .end: throw .protocolError(Self.closed)
        case .timedOut: throw .timedOut
        case .tooLong: throw .protocolError("reply line too long")
        case .line(let bytes):
            do {
                return try JSONRPC.ServerMessage(line: bytes)
            } catch {
                throw .protocolError(error.detail)
            }
        }
    }

    /// The next line from the daemon as it came (without its LF).
    func readLine() throws(Failure) -> [UInt8] {
        switch reader.next() {
        case .end: throw .protocolError(Self.closed)
        case .timedOut: throw .timedOut
        case .tooLong: throw .protocolError("reply line too long")
        case .line(let bytes): return bytes
        }
    }

    /// Reads until the daemon closes the connection; true when it did, false on a timeout.
    public func readUntilClosed() -> Bool {
        while true {
            switch reader.next() {
            case .end: return true
            case .timedOut: return false
            case .line, .tooLong: continue
            }
        }
    }

    private static let closed = "the daemon closed the connection"
    /// What `readMessage` says when the daemon closed the connection.
    static var closedDetail: String { closed }

    /// The id of the next request on this connection.
    func nextRequestID() -> Int64 {
        defer { nextID += 1 }
        return nextID
    }
}
