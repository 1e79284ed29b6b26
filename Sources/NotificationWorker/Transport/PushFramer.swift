import SottoWire

/// The worker's one push framer (PROTOCOL §2): splits what a push socket sends into frames,
/// the bytes before each LF, each at most `PushFrameLimits.maxPayloadBytes`; a longer one is
/// `tooLarge` and skipped up to its LF. It frames a connection's first line (a §2 push, or a
/// batch's opening line), the accept loop's non-blocking reads, and the pushes of a batch.
///
/// ```swift
/// var framer = PushFramer()
/// let used = framer.append(chunk, upTo: 1)   // what it completed is in framer.frames
/// if framer.isOverlong { … }                  // a §2 reader refuses at once, before the LF
/// framer.finish(emptyIsFrame: true)           // end of stream: the unterminated last line
/// ```
struct PushFramer {
    /// The frames completed so far, in order: `.payload` or `.tooLarge`.
    private(set) var frames: [PushRead] = []
    /// The frame being read is already over the limit (its bytes are dropped up to its LF).
    private(set) var isOverlong = false
    private var current: [UInt8] = []

    /// Bytes of a frame came that no LF has ended yet.
    var isMidFrame: Bool { isOverlong || !current.isEmpty }

    /// Feeds bytes until `maxFrames` frames are complete; returns how many it used. What is
    /// left follows the frames and is not theirs: a batch's pushes after its opening line, or
    /// the body after a push that names one.
    @discardableResult
    mutating func append(_ bytes: UnsafeRawBufferPointer, upTo maxFrames: Int = .max) -> Int {
        var start = 0
        while start < bytes.count, frames.count < maxFrames {
            let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n"))
            let end = newline ?? bytes.count
            if !isOverlong {
                if current.count + (end - start) > PushFrameLimits.maxPayloadBytes {
                    isOverlong = true
                    current = []
                } else {
                    current.append(contentsOf: bytes[start..<end])
                }
            }
            guard let newline else { return bytes.count }
            frames.append(isOverlong ? .tooLarge : .payload(current))
            current = []
            isOverlong = false
            start = newline + 1
        }
        return start
    }

    /// End of stream: an unterminated last line is a frame. An empty one is a frame only when
    /// `emptyIsFrame`: a §2 connection that sent nothing gets `malformed_payload` for it, while
    /// a batch whose last push ended at its LF has no more.
    mutating func finish(emptyIsFrame: Bool) {
        if isOverlong {
            frames.append(.tooLarge)
        } else if !current.isEmpty || emptyIsFrame {
            frames.append(.payload(current))
        }
        current = []
        isOverlong = false
    }
}
