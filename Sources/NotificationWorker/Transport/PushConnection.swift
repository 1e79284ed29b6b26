import Glibc
import SottoWire

/// One connected push socket: reads one framed payload under the protocol's silence timeout,
/// then writes exactly one ack line.
///
/// ```swift
/// let connection = PushConnection(readFD: 3, writeFD: 3)
/// let (first, rest) = connection.readFirstLine()  // a PushRead: .payload(bytes), .tooLarge, .timeout
/// let body = connection.readBody(length: n, after: rest)   // when the payload names a body
/// connection.writeAck(ack.encodeLine())
/// connection.endAck()            // the sender reads the ack, then end of stream
/// connection.drain()             // then close: no reset while the sender still writes
/// ```
struct PushConnection {
    /// A sender silent this long gets `timeout` (PROTOCOL §2).
    static let silenceTimeoutMs = PushFrameLimits.silenceTimeoutMs
    /// After the ack, what is still read (and dropped) before closing, at most: closing a
    /// socket with unread bytes resets the connection, and a sender still writing an
    /// oversize payload would read EPIPE or ECONNRESET instead of its ack.
    static let drainLimitBytes = 1 << 20
    static let drainTimeoutMs: Int64 = 1_000

    /// The sealed body that follows a push naming one (docs/protocol/bodies.md §5).
    enum BodyRead: Equatable {
        case bytes([UInt8])
        /// End of stream before the stated length: `body_missing`.
        case endedEarly
        case timeout
        case failed(errno: Int32)
    }

    /// Reading a whole body takes milliseconds; this bounds a sender that trickles.
    static let bodyReadBudgetMs: Int64 = 10_000

    let readFD: Int32
    let writeFD: Int32

    /// The first frame, and the bytes read after its LF (a batch sender's pushes, or a body;
    /// none from a plain §2 sender); `rest` is nil when the frame ended at end of stream, not
    /// at an LF. A frame over the limit is refused at once, without waiting for its LF.
    func readFirstLine(silenceTimeoutMs: Int32 = PushConnection.silenceTimeoutMs) -> (result: PushRead, rest: [UInt8]?) {
        var framer = PushFramer()
        var chunk = [UInt8](repeating: 0, count: PushFrameLimits.maxPayloadBytes + 1)
        while true {
            var pollfd = Glibc.pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pollfd, 1, silenceTimeoutMs)
            if ready == 0 { return (.timeout, nil) }
            if ready < 0 {
                if errno == EINTR { continue }
                return (.failed(errno: errno), nil)
            }
            let n = chunk.withUnsafeMutableBytes { read(readFD, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return (.failed(errno: errno), nil)
            }
            if n == 0 {
                framer.finish(emptyIsFrame: true)
                return (framer.frames[0], nil)
            }
            let used = chunk.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[..<n]), upTo: 1) }
            if let first = framer.frames.first { return (first, Array(chunk[used..<n])) }
            if framer.isOverlong { return (.tooLarge, nil) }
        }
    }

    /// Reads exactly `length` body bytes: first those that came after the payload's LF
    /// (`rest`; nil when the payload ended at end of stream, so no body can follow), then
    /// from the socket, under the silence timeout and `bodyReadBudgetMs`. Bytes after the body
    /// are left for `drain`.
    func readBody(length: Int, after rest: [UInt8]?,
                  silenceTimeoutMs: Int32 = PushConnection.silenceTimeoutMs) -> BodyRead {
        guard let rest else { return .endedEarly }
        var body = Array(rest.prefix(length))
        body.reserveCapacity(length)
        let deadline = MonotonicClock.nowMs() + Self.bodyReadBudgetMs
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while body.count < length {
            let left = deadline - MonotonicClock.nowMs()
            var pollfd = Glibc.pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
            let ready = left <= 0 ? 0 : poll(&pollfd, 1, Int32(min(left, Int64(silenceTimeoutMs))))
            if ready == 0 { return .timeout }
            if ready < 0 {
                if errno == EINTR { continue }
                return .failed(errno: errno)
            }
            let wanted = min(chunk.count, length - body.count)
            let n = chunk.withUnsafeMutableBytes { read(readFD, $0.baseAddress, wanted) }
            if n == 0 { return .endedEarly }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return .failed(errno: errno)
            }
            body.append(contentsOf: chunk[..<n])
        }
        return .bytes(body)
    }

    /// Half-closes the connection after the ack: the sender reads the ack, then end of stream.
    func endAck() {
        shutdown(writeFD, Int32(SHUT_WR))
    }

    /// Reads and drops what the sender still sends, until it closes, `drainLimitBytes`, or
    /// `drainTimeoutMs`; the caller closes afterwards.
    func drain() {
        let deadline = MonotonicClock.nowMs() + Self.drainTimeoutMs
        var chunk = [UInt8](repeating: 0, count: 16_384)
        var drained = 0
        while drained < Self.drainLimitBytes {
            let left = deadline - MonotonicClock.nowMs()
            if left <= 0 { return }
            var pollfd = Glibc.pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pollfd, 1, Int32(left))
            if ready < 0, errno == EINTR { continue }
            if ready <= 0 { return }
            let n = chunk.withUnsafeMutableBytes { read(readFD, $0.baseAddress, $0.count) }
            if n > 0 {
                drained += n
            } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
                return
            }
        }
    }

    /// Writes the ack line; a sender that already vanished is not an error worth more than a
    /// log line (SIGPIPE is ignored process-wide).
    @discardableResult
    func writeAck(_ line: String) -> Bool {
        var bytes = Array(line.utf8)
        return bytes.withUnsafeMutableBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let n = write(writeFD, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            return true
        }
    }
}
