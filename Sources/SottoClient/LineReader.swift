import Foundation

/// Reads LF-terminated lines from a blocking fd with a bound on line length; an over-long
/// line is reported once and discarded up to its LF. The CLI's side of the control socket.
///
/// ```swift
/// var reader = LineReader(fd: fd, maxLineBytes: 64 * 1024 * 1024)
/// if case .line(let data) = reader.next() { … }
/// ```
public struct LineReader {
    public enum Item { case line(Data), tooLong, end }

    let fd: Int32
    let maxLineBytes: Int
    private var buffer = Data()
    private var discarding = false

    public init(fd: Int32, maxLineBytes: Int) {
        self.fd = fd
        self.maxLineBytes = maxLineBytes
    }

    public mutating func next() -> Item {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if let newline = buffer.firstIndex(of: 0x0a) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[(newline + 1)...])
                if discarding {
                    discarding = false
                    continue
                }
                return .line(Data(line))
            }
            if buffer.count > maxLineBytes {
                buffer.removeAll(keepingCapacity: false)
                if !discarding {
                    discarding = true
                    return .tooLong
                }
            }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return .end }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }
}
