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
        let fd = UnixSocket.bind(path, type: Int32(SOCK_DGRAM.rawValue))
        guard fd >= 0 else { throw ControlServer.Failure.socket("bind \(path): \(String(cString: strerror(errno)))") }
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
