import Foundation
import SharedStore

/// A raw client of the daemon's control socket for tests: sends any bytes, reads one JSON
/// object per line, keeps notifications (`change`) apart from responses. Every read has a
/// deadline (`SO_RCVTIMEO`), so a daemon that never answers fails the test instead of
/// hanging it.
///
/// ```swift
/// let client = try ControlSocketClient(path: runtime + "/control.sock")
/// let response = try client.call("status")          // the whole response object
/// let result = try client.result("newConversation", ["name": "Trip"])
/// try client.sendRaw("garbage\n")
/// let error = try client.readResponse()
/// ```
public final class ControlSocketClient: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public let fd: Int32
    private var buffer: [UInt8] = []
    private var nextID = 1
    /// `change` notifications (their params, with `receivedNs` added) in arrival order.
    public private(set) var notifications: [[String: Any]] = []

    public init(path: String, timeoutSeconds: Int = 30) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: "connect \(path): \(String(cString: strerror(code)))")
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    // MARK: Sending

    public func sendRaw(_ text: String) throws { try sendRaw(Array(text.utf8)) }

    public func sendRaw(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "send: errno \(errno)")
            }
            offset += n
        }
    }

    /// Sends a request and returns the whole response object (`result` or `error`).
    public func call(_ method: String, _ params: [String: Any] = [:]) throws -> [String: Any] {
        let id = nextID
        nextID += 1
        let request: [String: Any] = ["jsonrpc": "2.0", "id": id, "method": method, "params": params]
        try sendRaw(String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self) + "\n")
        let response = try readResponse()
        guard (response["id"] as? Int) == id else { throw Failure(description: "response to another id: \(response)") }
        return response
    }

    /// The `result` of a call; throws with the error object when the daemon refused it.
    public func result(_ method: String, _ params: [String: Any] = [:]) throws -> [String: Any] {
        let response = try call(method, params)
        guard let result = response["result"] as? [String: Any] else {
            throw Failure(description: "\(method) failed: \(response["error"] ?? response)")
        }
        return result
    }

    // MARK: Reading

    /// The next response (a line with `id`), keeping notifications that come before it.
    public func readResponse() throws -> [String: Any] {
        while true {
            let object = try readObject()
            if object["id"] == nil, object["method"] != nil {
                notifications.append(Self.stamped(object))
                continue
            }
            return object
        }
    }

    /// The next `change` notification's params (`receivedNs` added: monotonic arrival time).
    public func nextNotification() throws -> [String: Any] {
        if !notifications.isEmpty { return notifications.removeFirst() }
        while true {
            let object = try readObject()
            if object["id"] == nil, object["method"] != nil { return Self.stamped(object) }
        }
    }

    /// Reads until the daemon closes the connection; true when it did within the deadline.
    public func readUntilClosed() -> Bool {
        while true {
            switch readChunk() {
            case .closed: return true
            case .timedOut: return false
            case .data: buffer.removeAll()
            }
        }
    }

    public func readObject() throws -> [String: Any] {
        let line = try readLine()
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else {
            throw Failure(description: "not a JSON object: \(String(decoding: line, as: UTF8.self))")
        }
        return object
    }

    private func readLine() throws -> [UInt8] {
        while true {
            if let newline = buffer.firstIndex(of: 0x0a) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            switch readChunk() {
            case .closed: throw Failure(description: "the daemon closed the connection")
            case .timedOut: throw Failure(description: "no reply within the deadline")
            case .data: continue
            }
        }
    }

    private enum Chunk { case data, closed, timedOut }

    private func readChunk() -> Chunk {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer += chunk[0..<n]
                return .data
            }
            if n == 0 { return .closed }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return .timedOut }
            return .closed
        }
    }

    private static func stamped(_ notification: [String: Any]) -> [String: Any] {
        var params = notification["params"] as? [String: Any] ?? [:]
        params["method"] = notification["method"]
        params["receivedNs"] = Int64(WallClock.monotonicNs())
        return params
    }
}
