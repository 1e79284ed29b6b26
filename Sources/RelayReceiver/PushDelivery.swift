import Glibc
import SharedStore

/// Hands one relay message to the device's push socket exactly as a remote sender does
/// (PROTOCOL §2): connect to push.sock (socket activation starts sotto-notify), write the
/// payload and LF, half-close, read the one ack line. The worker stays the only place a push
/// is decrypted and written.
///
/// ```swift
/// switch PushDelivery(socketPath: runtime.pushSocketPath).deliver(message.data) {
/// case .stored: try message.ack()
/// case .retry(let why): try message.nak(delayMs: backoff)
/// case .rejected(let code): try message.terminate()
/// }
/// ```
struct PushDelivery {
    enum Outcome: Equatable {
        /// The worker acked ok: stored now, or already (a duplicate).
        case stored(duplicate: Bool)
        /// Try again later: the worker said busy/timeout/internal, or no worker answered.
        case retry(String)
        /// The worker refused it for good (its §2 error code), or it cannot be a push.
        case rejected(String)
    }

    let socketPath: String
    /// Longer than the worker's own 30 s deadline.
    var ackTimeoutSeconds = 35

    func deliver(_ payload: [UInt8]) -> Outcome {
        // Framing is ours to protect: an LF would end the push early; past the limit the
        // worker refuses it anyway. Neither needs a worker to be started.
        guard !payload.isEmpty else { return .rejected(PushErrorCode.malformedPayload.rawValue) }
        guard payload.count <= PushPayload.maxBytes else { return .rejected(PushErrorCode.payloadTooLarge.rawValue) }
        guard !payload.contains(0x0a) else { return .rejected(PushErrorCode.malformedPayload.rawValue) }

        let fd = UnixSocket.connect(socketPath)
        guard fd >= 0 else { return .retry("push socket \(socketPath) unreachable: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: ackTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard UnixSocket.sendAll(fd, payload + [0x0a]) else { return .retry("write to push socket: errno \(errno)") }
        shutdown(fd, Int32(SHUT_WR))

        var line: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while line.count < 8192, !line.contains(0x0a) {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            line += chunk[0..<n]
        }
        if let newline = line.firstIndex(of: 0x0a) { line = Array(line[..<newline]) }
        switch PushAck.parse(line) {
        case .ok(_, let duplicate)?: return .stored(duplicate: duplicate)
        case .error(let error)?:
            return error.code.retry ? .retry(error.code.rawValue) : .rejected(error.code.rawValue)
        case nil: return .retry("no ack from the worker")
        }
    }
}
