import Glibc

/// The sender's side of a push on a connected stream socket (PROTOCOL §2): write the payload
/// and its LF (and the sealed body it names, docs/protocol/bodies.md §5), half-close, read the
/// one ack line the worker answers. Both senders use it: the
/// daemon's outbox (to a member's endpoint) and `sotto-relayd` (to this device's push.sock).
///
/// ```swift
/// switch PushExchange.run(fd, payload: payload, timeoutMs: 10_000) {
/// case .acked(let ack): … ack …
/// case .noAck(let why): … try again later …
/// }
/// ```
public enum PushExchange {
    public enum Outcome: Equatable, Sendable {
        case acked(PushAck)
        /// The write failed, or no valid ack line came before the deadline or the close.
        case noAck(String)
    }

    /// The longest ack line read; a worker's ack is under 300 bytes.
    public static let maxAckBytes = 8192

    public static func run(_ fd: Int32, payload: [UInt8], body: [UInt8]? = nil, timeoutMs: Int32) -> Outcome {
        var timeout = timeval(tv_sec: Int(timeoutMs / 1000), tv_usec: Int((timeoutMs % 1000) * 1000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard UnixSocket.sendAll(fd, payload + [0x0a]) else { return .noAck("write failed: errno \(errno)") }
        // A worker that refuses the push before reading its body may close with the body
        // unread: its ack, when one came, is still the answer.
        let bodyWritten = body.map { UnixSocket.sendAll(fd, $0) } ?? true
        shutdown(fd, Int32(SHUT_WR))

        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while reply.count < maxAckBytes, !reply.contains(0x0a) {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .noAck("no ack: errno \(errno)")
            }
            if n == 0 { break }
            reply += chunk[0..<n]
        }
        let outcome = parse(reply)
        if case .noAck = outcome, !bodyWritten { return .noAck("body write failed") }
        return outcome
    }

    /// The first line of what the endpoint answered, as an ack.
    public static func parse(_ reply: [UInt8]) -> Outcome {
        guard let line = reply.split(separator: 0x0a).first,
              let ack = PushAck.parse(Array(line)) else { return .noAck("no valid ack line") }
        return .acked(ack)
    }
}
