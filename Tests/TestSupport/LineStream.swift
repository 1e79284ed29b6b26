import Foundation

/// Reads a file descriptor to its end, handing over complete lines (without their LF) in
/// batches as they arrive: how the tests follow a child's output or a socket's line protocol.
///
/// ```swift
/// let tail = LineStream.read(fd) { lines in for line in lines { print(String(decoding: line, as: UTF8.self)) } }
/// ```
public enum LineStream {
    /// Returns whatever followed the last LF when the stream ended (empty when nothing did).
    @discardableResult
    public static func read(_ fd: Int32, lines: ([ArraySlice<UInt8>]) -> Void) -> [UInt8] {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            buffer += chunk[0..<n]
            var start = 0
            var complete: [ArraySlice<UInt8>] = []
            while let newline = buffer[start...].firstIndex(of: 0x0a) {
                complete.append(buffer[start..<newline])
                start = newline + 1
            }
            if !complete.isEmpty { lines(complete) }
            buffer.removeFirst(start)
        }
        return buffer
    }
}
