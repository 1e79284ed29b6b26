import Foundation
import SottoWire

/// Listens on `events.sock` for the workers' "I committed" datagrams (`EventsDatagram`,
/// `{"seq":N,"pid":P}`) and pokes the change feed with the seq (nil when the datagram is not
/// one: still worth a look). The datagram only says "look now": the feed reads the truth
/// from `change_log`, so a lost or forged datagram costs at most a read.
///
/// ```swift
/// let listener = try EventsSocketListener.bind(path: runtime.eventsSocketPath) { _ in feed.requestCatchUp() }
/// listener.start()
/// ```
public final class EventsSocketListener: @unchecked Sendable {
    let path: String
    private let fd: Int32
    private let onSignal: @Sendable (Int64?) -> Void

    private init(path: String, fd: Int32, onSignal: @escaping @Sendable (Int64?) -> Void) {
        self.path = path
        self.fd = fd
        self.onSignal = onSignal
    }

    /// The socket could not be bound; says why, as strerror does.
    struct BindFailure: Error, CustomStringConvertible {
        let description: String
    }

    public static func bind(path: String, onSignal: @escaping @Sendable (Int64?) -> Void) throws -> EventsSocketListener {
        let fd = UnixSocket.bind(path, type: UnixSocket.datagramType)
        guard fd >= 0 else { throw BindFailure(description: "bind \(path): \(String(cString: strerror(errno)))") }
        return EventsSocketListener(path: path, fd: fd, onSignal: onSignal)
    }

    public func start() {
        let thread = Thread { [self] in receiveLoop() }
        thread.name = "events-listener"
        thread.start()
    }

    public func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        unlink(path)
    }

    private func receiveLoop() {
        let ownPID = Int64(getpid())
        var buffer = [UInt8](repeating: 0, count: EventsDatagram.maxBytes)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            if n == 0 { return }  // shut down
            let signal = EventsDatagram.parse(buffer[0..<n])
            if signal?.pid == ownPID { continue }
            onSignal(signal?.seq)
        }
    }
}
