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
        switch PushExchange.run(fd, payload: payload, timeoutMs: Int32(ackTimeoutSeconds * 1000)) {
        case .acked(.ok(_, let duplicate)): return .stored(duplicate: duplicate)
        case .acked(.error(let error)):
            return error.code.retry ? .retry(error.code.rawValue) : .rejected(error.code.rawValue)
        case .noAck(let why): return .retry("no ack from the worker: \(why)")
        }
    }
}
