import Glibc
import SottoCrypto
import SottoWire

/// Hands relay messages to the device's push socket. One message: exactly as a remote sender
/// does (PROTOCOL §2): connect to push.sock (socket activation starts sotto-notify), write
/// the payload and LF, half-close, read the one ack line. Several: one connection in
/// Sotto's local batch extension (`PushBatchExchange`, docs/push-batch.md), which the worker
/// stores with one commit and acks push by push; a worker that does not speak it is sent
/// the pushes one by one. The worker stays the only place a push is decrypted and written.
///
/// ```swift
/// switch PushSocketHandoff(socketPath: runtime.pushSocketPath).deliver(message.data) {
/// case .stored: try message.ack()
/// case .retry(let why): try message.nak(delayMs: backoff)
/// case .rejected(let code): try message.terminate()
/// }
/// let outcomes = delivery.deliver(batch: payloads) { hint in fetch(hint) }   // one per payload, in order
/// ```
///
/// A push that names a body (docs/protocol/bodies.md §6) is never put in a batch: it goes on a
/// connection of its own with the body fetched from the relay after its LF, exactly as a
/// direct sender writes it; the pushes around it keep their order.
struct PushSocketHandoff {
    /// A body, as the relay answered for it.
    enum BodyFetch: Equatable {
        case found([UInt8])
        /// The relay holds no such body (expired, never published): the push can never be
        /// stored; the worker refuses it (`body_missing`) and records the sender's failed receipt.
        case missing
        /// The relay could not be asked: try again later.
        case failed(String)
    }

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

    func deliver(_ payload: [UInt8], body: [UInt8]? = nil) -> Outcome {
        if let refusal = Self.framingRefusal(payload) { return refusal }
        let fd = UnixSocket.connect(socketPath)
        guard fd >= 0 else { return .retry("push socket \(socketPath) unreachable: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        return Self.outcome(PushExchange.run(fd, payload: payload, body: body, timeoutMs: Int32(ackTimeoutSeconds * 1000)))
    }

    /// One outcome per payload, in order: the pushes without a body in batches, each one with a
    /// body alone with its body; after the first retry every later push waits too (the
    /// mailbox's order).
    func deliver(batch payloads: [[UInt8]], fetchBody: (BodyHint) -> BodyFetch) -> [Outcome] {
        var outcomes: [Outcome] = []
        var run: [[UInt8]] = []
        var held: String?
        func flush() {
            guard !run.isEmpty else { return }
            let results = held.map { why in run.map { _ in Outcome.retry(why) } } ?? deliver(batch: run)
            outcomes += results
            run = []
            for case .retry(let why) in results where held == nil { held = why }
        }
        for payload in payloads {
            guard let hint = Self.bodyHint(payload) else { run.append(payload); continue }
            flush()
            if let held { outcomes.append(.retry(held)); continue }
            let outcome: Outcome
            switch fetchBody(hint) {
            case .found(let body): outcome = deliver(payload, body: body)
            // The worker is still asked, with no body after the LF: it refuses the push as
            // `body_missing` and, once it knows who signed it, tells the sender in a failed
            // receipt (docs/protocol/receipts.md §4). Its ack decides, as for any push.
            case .missing: outcome = deliver(payload, body: nil)
            case .failed(let why): outcome = .retry("body \(hint.id.prefix(8)) not fetched: \(why)")
            }
            if case .retry(let why) = outcome { held = why }
            outcomes.append(outcome)
        }
        flush()
        return outcomes
    }

    /// The body a push names, when it decodes and names one.
    private static func bodyHint(_ payload: [UInt8]) -> BodyHint? {
        (try? PushPayload.decode(payload))?.body
    }

    /// One outcome per payload, in order. Payloads that cannot be framed are refused without
    /// a worker; the rest go in one batch (at most `PushBatchExchange.maxPushes`). None of
    /// them may name a body (`deliver(batch:fetchBody:)` sorts those out).
    func deliver(batch payloads: [[UInt8]]) -> [Outcome] {
        var outcomes: [Outcome?] = payloads.map(Self.framingRefusal)
        let sendable = payloads.indices.filter { outcomes[$0] == nil }
        guard !sendable.isEmpty else { return outcomes.map { $0! } }
        if sendable.count == 1 {
            outcomes[sendable[0]] = deliver(payloads[sendable[0]])
            return outcomes.map { $0! }
        }
        precondition(sendable.count <= PushBatchExchange.maxPushes, "batch over \(PushBatchExchange.maxPushes)")
        let fd = UnixSocket.connect(socketPath)
        guard fd >= 0 else {
            let why = "push socket \(socketPath) unreachable: \(String(cString: strerror(errno)))"
            return outcomes.map { $0 ?? .retry(why) }
        }
        let answer = PushBatchExchange.run(fd, payloads: sendable.map { payloads[$0] },
                                           timeoutMs: Int32(ackTimeoutSeconds * 1000))
        close(fd)
        switch answer {
        case .acked(let acks):
            for (index, ack) in zip(sendable, acks) { outcomes[index] = Self.outcome(ack) }
        case .notSpoken:
            RelaydLog.info("the worker does not take batches; delivering \(sendable.count) pushes one by one")
            var held: String?
            for index in sendable {
                // After a retry the rest waits too, so the mailbox keeps its order.
                if let held { outcomes[index] = .retry(held); continue }
                let outcome = deliver(payloads[index])
                outcomes[index] = outcome
                if case .retry(let why) = outcome { held = why }
            }
        }
        return outcomes.map { $0! }
    }

    /// Framing is ours to protect: an LF would end the push early; past the limit the worker
    /// refuses it anyway. Neither needs a worker to be started.
    private static func framingRefusal(_ payload: [UInt8]) -> Outcome? {
        if payload.isEmpty { return .rejected(PushErrorCode.malformedPayload.rawValue) }
        if payload.count > PushFrameLimits.maxPayloadBytes { return .rejected(PushErrorCode.payloadTooLarge.rawValue) }
        if payload.contains(0x0a) { return .rejected(PushErrorCode.malformedPayload.rawValue) }
        return nil
    }

    private static func outcome(_ exchange: PushExchange.Outcome) -> Outcome {
        switch exchange {
        case .acked(.ok(_, let duplicate)): return .stored(duplicate: duplicate)
        case .acked(.error(let error)):
            return error.code.retry ? .retry(error.code.rawValue) : .rejected(error.code.rawValue)
        case .noAck(let why): return .retry("no ack from the worker: \(why)")
        }
    }
}
