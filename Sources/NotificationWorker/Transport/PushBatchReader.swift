import Glibc
import SottoWire

/// Reads the pushes of a batch (`PushBatchExchange`, docs/push-batch.md) after its opening
/// line: one push per LF-terminated line, until the sender half-closes, `maxPushes` lines
/// were read, the sender falls silent for the §2 silence timeout, or `readBudgetMs` is spent.
/// A line over `PushFrameLimits.maxPayloadBytes` is `tooLarge` (and skipped up to its LF), an unterminated last
/// line before end of stream is a push, as on a §2 connection.
///
/// ```swift
/// let (first, rest) = connection.readFirstLine()
/// let lines = PushBatchReader(readFD: 3).read(startingWith: rest)
/// ```
struct PushBatchReader {
    enum Line: Equatable {
        case payload([UInt8])
        case tooLarge
        /// The sender stopped in the middle of a line (silence or the read budget).
        case timeout
    }

    let readFD: Int32
    var maxPushes = PushBatchExchange.maxPushes
    var silenceTimeoutMs = PushConnection.silenceTimeoutMs
    /// Reading a whole batch takes milliseconds; this bounds a sender that trickles.
    var readBudgetMs: Int64 = 10_000

    func read(startingWith rest: [UInt8]) -> [Line] {
        var lines: [Line] = []
        var current: [UInt8] = []
        var overlong = false

        /// Feeds bytes; false once `maxPushes` lines are complete.
        func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
            var start = 0
            while start < bytes.count {
                guard lines.count < maxPushes else { return false }
                let newline = bytes[start...].firstIndex(of: 0x0a)
                let end = newline ?? bytes.count
                if !overlong {
                    if current.count + (end - start) > PushFrame.maxPayloadBytes {
                        overlong = true
                        current = []
                    } else {
                        current.append(contentsOf: bytes[start..<end])
                    }
                }
                guard let newline else { return true }
                lines.append(overlong ? .tooLarge : .payload(current))
                current = []
                overlong = false
                start = newline + 1
            }
            return lines.count < maxPushes
        }

        var more = rest.withUnsafeBytes { feed($0) }
        let deadline = nowMs() + readBudgetMs
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while more {
            let left = deadline - nowMs()
            var pollfd = Glibc.pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
            let ready = left <= 0 ? 0 : poll(&pollfd, 1, Int32(min(left, Int64(silenceTimeoutMs))))
            if ready < 0, errno == EINTR { continue }
            if ready <= 0 {
                if overlong || !current.isEmpty { lines.append(.timeout) }
                return lines
            }
            let n = chunk.withUnsafeMutableBytes { Glibc.read(readFD, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return lines
            }
            if n == 0 {
                if overlong { lines.append(.tooLarge) } else if !current.isEmpty { lines.append(.payload(current)) }
                return lines
            }
            more = chunk.withUnsafeBytes { feed(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
        }
        return lines
    }

    private func nowMs() -> Int64 { Int64(WallClock.monotonicNs() / 1_000_000) }
}
