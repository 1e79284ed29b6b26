import Foundation

/// Reads a nats-server's HTTP monitoring endpoints (`-m PORT`), as a relay operator would:
/// the connections with their names and subscriptions (`/connz`), the JetStream consumers
/// (`/jsz`). Plain HTTP/1.0 over a loopback socket, bounded by a receive timeout.
///
/// ```swift
/// let monitor = NatsMonitor(port: server.monitorPort!)
/// let connz = try monitor.json("/connz?state=all&subs=1&limit=10000")
/// ```
public struct NatsMonitor: Sendable {
    public let port: Int

    public init(port: Int) { self.port = port }

    /// The endpoint's JSON object.
    public func json(_ path: String) throws -> [String: Any] {
        let body = try get(path)
        guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw LoggedProcess.Failure(description: "\(path): not a JSON object")
        }
        return object
    }

    /// The body of `GET path`, which must answer 200.
    public func get(_ path: String) throws -> [UInt8] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw LoggedProcess.Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw LoggedProcess.Failure(description: "connect to monitor port \(port): errno \(errno)") }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else {
            throw LoggedProcess.Failure(description: "send to monitor port: errno \(errno)")
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { break }
            guard count > 0 else { throw LoggedProcess.Failure(description: "\(path): recv errno \(errno)") }
            response += buffer[0..<count]
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, response.count - 3)).first(where: { Array(response[$0..<$0 + 4]) == separator }) else {
            throw LoggedProcess.Failure(description: "\(path): no HTTP header in \(response.count) bytes")
        }
        let status = String(decoding: response[0..<end], as: UTF8.self).split(separator: "\r\n").first ?? ""
        guard status.contains(" 200") else { throw LoggedProcess.Failure(description: "\(path): \(status)") }
        return Array(response[(end + 4)...])
    }
}
