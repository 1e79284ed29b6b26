import Glibc
import SottoWire

/// Reads the pushes of a batch (`PushBatchExchange`, docs/push-batch.md) after its opening
/// line, framed by the worker's one `PushFramer`: one push per LF-terminated line, until the
/// sender half-closes, `maxPushes` lines were read, the sender falls silent for the §2 silence
/// timeout, or `readBudgetMs` is spent. A line over the limit is `tooLarge`; an unterminated
/// last line before end of stream is a push, as on a §2 connection; a line cut off by silence
/// is `timeout`.
///
/// ```swift
/// let (first, rest) = connection.readFirstLine()
/// let lines = PushBatchReader(readFD: 3).read(startingWith: rest)   // [PushRead]
/// ```
struct PushBatchReader {
    let readFD: Int32
    var maxPushes = PushBatchExchange.maxPushes
    var silenceTimeoutMs = PushConnection.silenceTimeoutMs
    /// Reading a whole batch takes milliseconds; this bounds a sender that trickles.
    var readBudgetMs: Int64 = 10_000

    func read(startingWith rest: [UInt8]) -> [PushRead] {
        var framer = PushFramer()
        rest.withUnsafeBytes { _ = framer.append($0, upTo: maxPushes) }
        let deadline = nowMs() + readBudgetMs
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while framer.frames.count < maxPushes {
            let left = deadline - nowMs()
            var pollfd = Glibc.pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
            let ready = left <= 0 ? 0 : poll(&pollfd, 1, Int32(min(left, Int64(silenceTimeoutMs))))
            if ready < 0, errno == EINTR { continue }
            if ready <= 0 {
                return framer.frames + (framer.isMidFrame ? [.timeout] : [])
            }
            let n = chunk.withUnsafeMutableBytes { Glibc.read(readFD, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return framer.frames
            }
            if n == 0 {
                framer.finish(emptyIsFrame: false)
                return framer.frames
            }
            chunk.withUnsafeBytes { _ = framer.append(UnsafeRawBufferPointer(rebasing: $0[..<n]), upTo: maxPushes) }
        }
        return framer.frames
    }

    private func nowMs() -> Int64 { MonotonicClock.nowMs() }
}
