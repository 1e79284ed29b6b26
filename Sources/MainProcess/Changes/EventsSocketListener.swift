import Foundation
import SharedStore

/// Listens on `events.sock` for the workers' "I committed" datagrams (`{"seq":N,"pid":P}`)
/// and pokes the change feed. The datagram only says "look now": the feed reads the truth
/// from `change_log`, so a lost or forged datagram costs at most a read.
///
/// ```swift
/// let listener = try EventsSocketListener.bind(path: runtime.eventsSocketPath) { seq in
///     Task { await feed.catchUp() }
/// }
/// listener.start()
/// ```
final class EventsSocketListener: @unchecked Sendable {
    let path: String
    private let fd: Int32
    private let onSignal: @Sendable (Int64?) -> Void

    private init(path: String, fd: Int32, onSignal: @escaping @Sendable (Int64?) -> Void) {
        self.path = path
        self.fd = fd
        self.onSignal = onSignal
    }

    static func bind(path: String, onSignal: @escaping @Sendable (Int64?) -> Void) throws -> EventsSocketListener {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ControlServer.Failure.socket("events socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw ControlServer.Failure.socket("events socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        unlink(path)
        let oldMask = umask(0o177)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(oldMask)
        guard result == 0 else {
            let code = errno
            close(fd)
            throw ControlServer.Failure.socket("bind \(path): errno \(code)")
        }
        return EventsSocketListener(path: path, fd: fd, onSignal: onSignal)
    }

    func start() {
        let thread = Thread { [self] in receiveLoop() }
        thread.name = "events-listener"
        thread.start()
    }

    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        unlink(path)
    }

    private func receiveLoop() {
        let ownPID = Int64(getpid())
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            if n == 0 { return }  // shut down
            let signal = Self.parse(Array(buffer[0..<n]))
            if signal?.pid == ownPID { continue }
            onSignal(signal?.seq)
        }
    }

    /// `{"seq":N,"pid":P}`; nil for anything else (still worth a look at change_log).
    static func parse(_ bytes: [UInt8]) -> (seq: Int64, pid: Int64)? {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any],
              let seq = (object["seq"] as? NSNumber)?.int64Value,
              let pid = (object["pid"] as? NSNumber)?.int64Value else { return nil }
        return (seq, pid)
    }
}
