/// The push framing limits of PROTOCOL §2, defined once: every reader of a push frame (the
/// worker's one-shot connection, its accept loop, its batch reader) and every sender that
/// refuses a push before sending (sotto-relayd) uses these, and the two refusals below are the
/// only spelling of their errors.
///
/// ```swift
/// if buffer.count > PushFrameLimits.maxPayloadBytes { return .error(PushFrameLimits.tooLarge) }
/// poll(&pollfd, 1, PushFrameLimits.silenceTimeoutMs)   // 0 ready: .error(PushFrameLimits.silent)
/// ```
public enum PushFrameLimits {
    /// The most bytes a push may have before its LF (or end of stream).
    public static let maxPayloadBytes = 4096
    /// A sender silent this long before its frame is complete gets `timeout`.
    public static let silenceTimeoutMs: Int32 = 5_000

    /// The refusal of a frame over `maxPayloadBytes`.
    public static var tooLarge: PushError {
        PushError(.payloadTooLarge, "payload over \(maxPayloadBytes) bytes")
    }

    /// The refusal of a sender that fell silent for `silenceTimeoutMs` before its frame ended.
    public static var silent: PushError {
        PushError(.timeout, "no payload within \(silenceTimeoutMs / 1000) s")
    }
}
