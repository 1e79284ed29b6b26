import Glibc

/// Reads LF-terminated lines from a blocking fd with a bound on line length; an over-long
/// line is reported once and discarded up to its LF. A receive timeout on the socket
/// (`SO_RCVTIMEO`) shows as `.timedOut`.
///
/// ```swift
/// var reader = LineReader(fd: fd, maxLineBytes: JSONRPC.maxReplyBytes)
/// if case .line(let bytes) = reader.next() { … }
/// ```
public struct LineReader {
    public enum Item: Equatable { case line([UInt8]), tooLong, end, timedOut }

    let fd: Int32
    let maxLineBytes: Int
    private var buffer: [UInt8] = []
    /// Where the unread part of `buffer` starts: lines are sliced off without moving the rest.
    private var start = 0
    private var discarding = false

    public init(fd: Int32, maxLineBytes: Int) {
        self.fd = fd
        self.maxLineBytes = maxLineBytes
    }

    public mutating func next() -> Item {
        var scanned = start
        while true {
            if let newline = buffer[scanned...].firstIndex(of: 0x0a) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                scanned = start
                if discarding {
                    discarding = false
                    continue
                }
                return .line(line)
            }
            scanned = buffer.count
            if buffer.count - start > maxLineBytes {
                buffer.removeAll(keepingCapacity: false)
                (start, scanned) = (0, 0)
                if !discarding {
                    discarding = true
                    return .tooLong
                }
            }
            if start > 0 {
                buffer.removeSubrange(0..<start)
                scanned -= start
                start = 0
            }
            switch receive() {
            case .data: continue
            case .end: return .end
            case .timedOut: return .timedOut
            }
        }
    }

    private enum Received { case data, end, timedOut }

    private mutating func receive() -> Received {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                buffer.append(contentsOf: chunk[0..<n])
                return .data
            }
            if n == 0 { return .end }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return .timedOut }
            return .end
        }
    }
}
