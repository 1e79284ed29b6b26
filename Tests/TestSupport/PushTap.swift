import Foundation
import SottoCrypto
import SottoWire

/// A wiretap on a device's push endpoint: it listens on the path the other daemons deliver
/// to, keeps each push exactly as it arrived (the payload line without its LF, and the sealed
/// body a push by reference carries after it), hands it to the device's real worker socket
/// and returns the worker's ack unchanged. What a test then opens is what a daemon sent, not
/// a copy it kept.
///
/// ```swift
/// let tap = try PushTap.install(on: carol, in: tmp.path)   // carol's worker moves behind it
/// … the others send to carol …
/// for push in tap.captured { try IndependentReader.open(push.payload, recipient: carolKey) }
/// ```
public final class PushTap: @unchecked Sendable {
    public struct Push: Sendable {
        public let payload: [UInt8]
        public let body: [UInt8]
        public let ack: String
    }

    public let path: String
    private let workerSocket: String
    private let listener: Int32
    private let lock = NSLock()
    private var pushes: [Push] = []
    private var worker: PushSocketServer?

    /// Moves `device`'s worker socket to `directory/<name>-worker.sock` and listens on the
    /// device's own push socket path in its place.
    public static func install(on device: Device, in directory: String) throws -> PushTap {
        device.stopPushSocket()
        let workerSocket = directory + "/\(device.name)-worker.sock"
        let worker = try PushSocketServer.start(socketPath: workerSocket, accept: true,
                                                command: [try builtExecutable("sotto-notify")], environment: device.environment)
        let tap = try PushTap(path: device.runtime.pushSocketPath, workerSocket: workerSocket)
        tap.worker = worker
        return tap
    }

    private init(path: String, workerSocket: String) throws {
        self.path = path
        self.workerSocket = workerSocket
        unlink(path)
        listener = UnixSocket.bind(path, type: Int32(SOCK_STREAM.rawValue))
        guard listener >= 0, listen(listener, 64) == 0 else {
            throw PushClient.Failure(message: "tap: cannot listen on \(path): errno \(errno)")
        }
        Thread { [self] in serve() }.start()
    }

    /// Every push that reached the tap so far, in arrival order.
    public var captured: [Push] { lock.withLock { pushes } }

    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        worker?.stop()
    }

    private func serve() {
        while true {
            let fd = UnixSocket.accept(listener, nonBlocking: false)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return  // stopped
            }
            Thread { [self] in relay(fd) }.start()
        }
    }

    /// Reads one push (its line, and the body its payload names), forwards it, answers.
    private func relay(_ fd: Int32) {
        defer { close(fd) }
        var received: [UInt8] = []
        var needed: Int?
        var lineEnd = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while needed.map({ received.count < $0 }) ?? true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            received += buffer[0..<n]
            if needed == nil, let lf = received.firstIndex(of: 0x0a) {
                lineEnd = lf
                needed = lf + 1 + Int((try? PushPayload.decode(received[..<lf]))?.body?.length ?? 0)
            }
        }
        guard needed != nil else { return }
        let payload = Array(received[..<lineEnd])
        let body = Array(received[(lineEnd + 1)...])
        let ack = (try? PushClient.send(payload, body: body.isEmpty ? nil : body, to: workerSocket)) ?? ""
        lock.withLock { pushes.append(Push(payload: payload, body: body, ack: ack)) }
        _ = UnixSocket.sendAll(fd, Array((ack + "\n").utf8))
    }
}
