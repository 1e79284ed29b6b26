import Glibc
import NIOCore

/// Frames a control client's bytes into request lines (LF-terminated, a CR before it is
/// left to the JSON parser's whitespace rules) without ever holding more than one line over
/// `maxLineBytes`: the rest of an over-long line is skipped up to its LF and reported once
/// as `.tooLong`. It holds bytes until asked for a frame, so the server reads the next
/// request only when the previous one was answered.
///
/// ```swift
/// var decoder = ControlRequestDecoder(maxLineBytes: JSONRPC.maxLineBytes)
/// decoder.append(ByteBuffer(string: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\"}\n"))
/// decoder.nextFrame()   // .line(…the request, without its LF…)
/// decoder.nextFrame()   // nil: nothing complete is left
/// ```
struct ControlRequestDecoder {
    enum Frame: Equatable {
        /// One line without its LF.
        case line(ByteBuffer)
        /// A line longer than `maxLineBytes`: dropped (what is still to come of it too).
        case tooLong
    }

    let maxLineBytes: Int
    /// Bytes received and not yet handed out as frames.
    private var buffered: ByteBuffer?
    /// The rest of an over-long line is being skipped up to its LF.
    private var discarding = false
    /// `buffered` holds no LF before this many readable bytes (each byte is searched once).
    private var searched = 0

    init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    /// Bytes held: complete lines not handed out yet and the unfinished one.
    var bufferedBytes: Int { buffered?.readableBytes ?? 0 }

    // MARK: - Input

    mutating func append(_ bytes: ByteBuffer) {
        var bytes = bytes
        if discarding {
            guard let newline = Self.firstNewline(in: bytes, from: 0) else { return }
            bytes.moveReaderIndex(forwardBy: newline + 1)
            discarding = false
        }
        guard bytes.readableBytes > 0 else { return }
        if buffered == nil || buffered!.readableBytes == 0 {
            buffered = bytes  // the common case: no copy
            searched = 0
        } else {
            buffered!.writeImmutableBuffer(bytes)
        }
    }

    // MARK: - Frames

    /// The next complete line, or `.tooLong` once for a line over the bound; nil when what is
    /// held is an unfinished line within the bound.
    mutating func nextFrame() -> Frame? {
        guard var held = buffered, held.readableBytes > 0 else { return nil }
        guard let length = Self.firstNewline(in: held, from: searched) else {
            searched = held.readableBytes
            guard held.readableBytes > maxLineBytes else { return nil }
            release()
            discarding = true
            return .tooLong
        }
        let line = held.readSlice(length: length)!
        held.moveReaderIndex(forwardBy: 1)
        buffered = held
        searched = 0
        if held.readableBytes == 0 { release() }
        return length > maxLineBytes ? .tooLong : .line(line)
    }

    /// At the end of input: the unfinished last line, if any, as a frame of its own.
    mutating func finish() -> Frame? {
        defer { release() }
        guard !discarding, let held = buffered, held.readableBytes > 0 else { return nil }
        return held.readableBytes > maxLineBytes ? .tooLong : .line(held)
    }

    /// The offset of the first LF at or after `offset` in `buffer`'s readable bytes (memchr:
    /// a byte-by-byte search is 20 times slower in a debug build, and every byte is searched).
    private static func firstNewline(in buffer: ByteBuffer, from offset: Int) -> Int? {
        buffer.withUnsafeReadableBytes { bytes -> Int? in
            guard offset < bytes.count, let base = bytes.baseAddress,
                  let hit = memchr(base + offset, 0x0a, bytes.count - offset) else { return nil }
            return base.distance(to: UnsafeRawPointer(hit))
        }
    }

    /// Gives the storage back (a 250 KB line's buffer is not kept for the next small one).
    private mutating func release() {
        buffered = nil
        searched = 0
    }
}
