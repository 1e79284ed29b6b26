import Foundation
import SottoCrypto
import SottoWire

/// One unix socket that stands for any number of members' devices in a benchmark: it reads
/// each push, its LF and the body the push names (docs/protocol/bodies.md §5), and acks ok at
/// once, or after `ackDelayMs` (a real device's worker takes a few ms from spawn to durable
/// ack). What it costs the sender is the writing, the reading and that wait, nothing else.
///
/// ```swift
/// let sink = AckingPushSink(path: dir.path + "/sink.sock")
/// endpoint = "unix:" + sink.path     // for every member
/// sink.captured                      // with `keep: true`: each payload line, in arrival order
/// ```
public final class AckingPushSink: @unchecked Sendable {
    public let path: String
    public let ackDelayMs: Int
    private let listener: Int32
    /// Whether the payloads are kept (a test that opens what was sent); a benchmark keeps none.
    private let keep: Bool
    private let lock = NSLock()
    private var payloads: [[UInt8]] = []

    public init(path: String, ackDelayMs: Int = 0, keep: Bool = false) {
        self.path = path
        self.ackDelayMs = ackDelayMs
        self.keep = keep
        listener = UnixSocket.bind(path, type: Int32(SOCK_STREAM.rawValue))
        guard listener >= 0, listen(listener, 64) == 0 else { fatalError("sink: cannot listen on \(path)") }
        Thread { [self] in serve() }.start()
    }

    private func serve() {
        let ack = Array("{\"ok\":true,\"messageId\":\"\(String(repeating: "0", count: 32))\",\"duplicate\":false}\n".utf8)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let fd = UnixSocket.accept(listener, nonBlocking: false)
            guard fd >= 0 else { continue }
            var received: [UInt8] = []
            var needed: Int?
            while needed.map({ received.count < $0 }) ?? true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                received += buffer[0..<n]
                if needed == nil, let lf = received.firstIndex(of: 0x0a) {
                    let hint = (try? PushPayload.decode(received[..<lf]))?.body
                    needed = lf + 1 + Int(hint?.length ?? 0)
                }
            }
            if keep, let lf = received.firstIndex(of: 0x0a) {
                let line = Array(received[..<lf])
                lock.withLock { payloads.append(line) }
            }
            if ackDelayMs > 0 { usleep(useconds_t(ackDelayMs * 1_000)) }  // the stand-in worker's work, not a synchronisation
            _ = UnixSocket.sendAll(fd, ack)
            close(fd)
        }
    }

    /// The payload lines received so far (only with `keep: true`).
    public var captured: [[UInt8]] { lock.withLock { payloads } }
}
