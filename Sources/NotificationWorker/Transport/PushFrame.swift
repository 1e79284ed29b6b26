import SottoWire

/// Frames one push on a stream socket (PROTOCOL §2): bytes up to the first LF, or to end of
/// stream; more than `PushFrame.maxPayloadBytes` before either is too large.
///
/// ```swift
/// var frame = PushFrame()
/// frame.append(chunk)              // as bytes arrive
/// switch frame.state { case .complete(let payload): …; case .tooLarge: …; case .incomplete: … }
/// frame.finish()                   // at end of stream: what came is the payload
/// ```
struct PushFrame {
    static let maxPayloadBytes = PushFrameLimits.maxPayloadBytes

    enum State: Equatable {
        case incomplete
        case complete([UInt8])
        case tooLarge
    }

    private(set) var state: State = .incomplete
    /// The bytes that came after the LF in the chunk that completed the frame (a §2 sender
    /// sends none; a batch sender, `PushBatchExchange`, sends its pushes); nil when no LF
    /// ended the frame (end of stream, or still incomplete).
    private(set) var rest: [UInt8]?
    private var buffer: [UInt8] = []

    /// Feeds bytes from the socket. Bytes after a complete frame are kept in `rest` (only
    /// those of the chunk that completed it).
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard case .incomplete = state else { return }
        if let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
            guard buffer.count + newline <= Self.maxPayloadBytes else { state = .tooLarge; return }
            buffer.append(contentsOf: bytes[..<newline])
            state = .complete(buffer)
            buffer = []
            rest = Array(bytes[(newline + 1)...])
            return
        }
        guard buffer.count + bytes.count <= Self.maxPayloadBytes else { state = .tooLarge; return }
        buffer.append(contentsOf: bytes)
    }

    /// The sender half-closed: whatever came is the payload (possibly empty or truncated,
    /// which the decoder rejects as malformed).
    mutating func finish() {
        guard case .incomplete = state else { return }
        state = .complete(buffer)
        buffer = []
    }
}
