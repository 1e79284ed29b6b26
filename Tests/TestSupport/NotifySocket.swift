import Foundation

/// The test's stand-in for systemd's notify socket: a bound `AF_UNIX` datagram socket whose
/// path goes into the daemon's `NOTIFY_SOCKET`. Every `sd_notify` call arrives as one
/// datagram (`READY=1\nSTATUS=…`). Receiving blocks on the socket (poll with a deadline),
/// never on a sleep.
///
/// ```swift
/// let notify = try NotifySocket(path: tmp.path + "/notify.sock")
/// let ready = try notify.waitFor("READY=1", timeout: 30)   // the whole datagram
/// ```
public final class NotifySocket: @unchecked Sendable {
    public struct Timeout: Error, CustomStringConvertible {
        public let description: String
    }

    public let path: String
    private let fd: Int32
    private let lock = NSLock()
    private var received: [String] = []

    public init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Timeout(description: "socket: errno \(errno)") }
        self.path = path
        unlink(path)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        precondition(bytes.count < MemoryLayout.size(ofValue: address.sun_path), "notify socket path too long")
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            close(fd)
            throw Timeout(description: "bind \(path): errno \(errno)")
        }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Every datagram received so far, in order.
    public var messages: [String] { lock.withLock { received } }

    /// The next datagram, or nil when none arrives within `timeout` seconds.
    public func next(timeout: Double) -> String? {
        var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            let rc = poll(&pollFD, 1, left)
            if rc < 0, errno == EINTR { continue }
            guard rc > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard n > 0 else { continue }
            let text = String(decoding: buffer[0..<n], as: UTF8.self)
            lock.withLock { received.append(text) }
            return text
        }
    }

    /// Reads datagrams until one has a line equal to `line` (e.g. `READY=1`); returns it.
    /// `stillWaiting` is asked between datagrams (e.g. "is the process still running?").
    @discardableResult
    public func waitFor(_ line: String, timeout: Double = 60, stillWaiting: () -> Bool = { true }) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while deadline.timeIntervalSinceNow > 0 {
            if let message = next(timeout: min(0.2, max(0, deadline.timeIntervalSinceNow))) {
                if message.split(separator: "\n").contains(where: { $0 == line }) { return message }
                continue
            }
            guard stillWaiting() else { throw Timeout(description: "gave up waiting for \(line): the process ended") }
        }
        throw Timeout(description: "no \(line) within \(timeout) s; got \(messages)")
    }
}
