import SottoWire

/// What handling one push produced: the ack line for the sender and the work to do after
/// it is written (tell the daemon, post the desktop notification).
///
/// ```swift
/// let outcome = processor.handle(.payload(bytes))
/// connection.writeAck(outcome.ackLine)
/// outcome.afterAck()
/// ```
struct PushOutcome {
    let ack: PushAck
    let afterAck: () -> Void

    var ackLine: String { String(decoding: ack.encodeLine(), as: UTF8.self) }

    /// Manual mode's exit status: 0 for ok, 75 (EX_TEMPFAIL) for a retryable error, 65
    /// (EX_DATAERR) for a permanent one.
    var exitStatus: Int32 {
        switch ack {
        case .ok: return 0
        case .error(let error): return error.code.retry ? 75 : 65
        }
    }

    static func rejected(_ code: PushErrorCode, _ detail: String) -> PushOutcome {
        PushOutcome(refusal: PushError(code, detail))
    }
}

extension PushOutcome {
    /// A push refused before anything was stored (e.g. `PushFrameLimits.tooLarge`).
    init(refusal: PushError) {
        self.init(ack: .error(refusal), afterAck: {})
    }
}
