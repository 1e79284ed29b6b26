import Foundation
import ControlProtocol
import SharedStore

/// The CLI's side of the control socket: one request line out, one response line back;
/// `stream` keeps reading notification lines for `sotto watch`.
///
/// ```swift
/// let client = try ControlClient.connect(path: runtime.controlSocketPath)
/// let result = try client.call("status")
/// ```
public final class ControlClient {
    public enum Failure: Error, CustomStringConvertible {
        case daemonNotRunning(path: String)
        case permissionDenied(path: String)
        case rpc(code: Int, message: String)
        case protocolError(String)

        public var description: String {
            switch self {
            case .daemonNotRunning(let path):
                return "the Sotto daemon is not running (no listener on \(path)). Start it with `systemctl --user start sotto` or `sotto daemon`."
            case .permissionDenied(let path):
                return "permission denied on \(path): the control socket (or its directory) belongs to another user"
            case .rpc(_, let message): return message
            case .protocolError(let detail): return "unexpected reply from the daemon: \(detail)"
            }
        }
    }

    private let fd: Int32
    private var reader: LineReader
    private var nextID = 1
    /// Notifications that arrived while waiting for a response (a subscription's replay can
    /// overtake the `subscribe` response); `stream` delivers them first.
    private var early: [[String: Any]] = []

    private init(fd: Int32) {
        self.fd = fd
        self.reader = LineReader(fd: fd, maxLineBytes: 64 * 1024 * 1024)
    }

    deinit { close(fd) }

    public static func connect(path: String) throws(Failure) -> ControlClient {
        let fd = UnixSocket.connect(path)
        guard fd >= 0 else {
            throw errno == EACCES || errno == EPERM ? .permissionDenied(path: path) : .daemonNotRunning(path: path)
        }
        return ControlClient(fd: fd)
    }

    /// Calls `method` and returns its `result`.
    public func call(_ method: String, _ params: [String: Any] = [:]) throws(Failure) -> Any {
        let id = nextID
        nextID += 1
        do {
            try send(JSONRPC.requestLine(id: id, method: method, params: params))
        } catch {
            // The daemon may have answered and closed before reading the request (a refused
            // peer): its reply is still readable, and says more than "write failed".
            if let object = try? readObject(), let refusal = object["error"] as? [String: Any] {
                throw .rpc(code: refusal["code"] as? Int ?? -32603, message: refusal["message"] as? String ?? "error")
            }
            throw error
        }
        while true {
            let object = try readObject()
            guard object["id"] != nil else {
                if let params = object["params"] as? [String: Any] { early.append(params) }
                continue
            }
            if let error = object["error"] as? [String: Any] {
                throw .rpc(code: error["code"] as? Int ?? -32603, message: error["message"] as? String ?? "error")
            }
            guard let result = object["result"] else { throw .protocolError("no result") }
            return result
        }
    }

    /// Reads notifications until the daemon closes the connection.
    public func stream(_ onNotification: ([String: Any]) -> Void) throws(Failure) {
        for params in early { onNotification(params) }
        early.removeAll()
        while true {
            let object = try readObject()
            if object["id"] == nil, let params = object["params"] as? [String: Any] {
                onNotification(params)
            }
        }
    }

    private func send(_ line: String) throws(Failure) {
        guard UnixSocket.sendAll(fd, Array(line.utf8)) else { throw .protocolError("write failed: errno \(errno)") }
    }

    private func readObject() throws(Failure) -> [String: Any] {
        switch reader.next() {
        case .end: throw .protocolError("the daemon closed the connection")
        case .tooLong: throw .protocolError("reply line too long")
        case .line(let data):
            guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                throw .protocolError("not JSON")
            }
            return object
        }
    }
}
