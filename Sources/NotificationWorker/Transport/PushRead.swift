import SottoWire

/// What reading one push frame gave, from any of the worker's readers (a connection's first
/// line, the accept loop, a batch's lines), and the one place a read that is not a payload
/// becomes its refusal.
///
/// ```swift
/// let (read, rest) = connection.readFirstLine()
/// if let refusal = read.refusal { connection.writeAck(PushAck.error(refusal).encodeLine()) }
/// ```
enum PushRead: Equatable {
    case payload([UInt8])
    /// Over `PushFrameLimits.maxPayloadBytes` before its LF (or end of stream).
    case tooLarge
    /// The sender fell silent (or a batch's read budget ran out) in the middle of a frame.
    case timeout
    case failed(errno: Int32)

    /// The ack for a frame that is not a push; nil for a payload.
    var refusal: PushError? {
        switch self {
        case .payload: nil
        case .tooLarge: PushFrameLimits.tooLarge
        case .timeout: PushFrameLimits.silent
        case .failed(let code): PushError(.internal, "read failed: errno \(code)")
        }
    }
}
