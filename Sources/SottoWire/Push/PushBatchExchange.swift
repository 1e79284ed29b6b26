import Glibc

/// Sotto's local batch extension of push.sock (docs/push-batch.md, docs/adr/0027): the
/// device's own `sotto-relayd` hands the worker up to `maxPushes` pushes on one connection,
/// which the worker stores with one commit. Not part of PROTOCOL §2, and no §2 sender can
/// start it by accident: it begins with `openingLine`, which is not JSON (a §2 payload is
/// a JSON object), and the worker honours it only from a peer with its own uid.
///
/// The exchange: the sender writes `openingLine` LF, then each payload LF, then half-closes.
/// A worker that speaks the extension answers `acceptedLine` LF, then exactly one §2 ack
/// line per push it took, in order, then closes. A push with no ack line was not taken (not
/// stored). A worker that does not speak it answers one §2 error ack for the opening line
/// (`malformed_payload`) and stores nothing: the sender then falls back to single pushes.
///
/// ```swift
/// switch PushBatchExchange.run(fd, payloads: payloads, timeoutMs: 35_000) {
/// case .acked(let outcomes): for (payload, outcome) in zip(payloads, outcomes) { … }
/// case .notSpoken: … deliver each with PushExchange.run …
/// }
/// ```
public enum PushBatchExchange {
    // MARK: The wire

    /// The first line a batch sender writes (without its LF).
    public static let openingLine: [UInt8] = Array("#sotto-push-batch v1".utf8)
    /// The first line a worker that took the batch answers (without its LF).
    public static let acceptedLine: [UInt8] = Array("#sotto-push-batch v1 accepted".utf8)
    /// Pushes per batch at most: ≤ 1 MiB of payloads, and ~0.1-0.3 s of the worker's 30 s.
    public static let maxPushes = 256

    public enum Result: Equatable, Sendable {
        /// One outcome per payload sent, in order; `.noAck` for a push the worker did not ack.
        case acked([PushExchange.Outcome])
        /// The endpoint answered the opening line as a §2 push: it does not take batches and
        /// stored nothing; deliver each push on its own.
        case notSpoken
    }

    // MARK: The sender's side

    /// Writes the batch (at most `maxPushes` payloads, none containing LF), half-closes and
    /// reads the answer; `timeoutMs` bounds each read and write.
    public static func run(_ fd: Int32, payloads: [[UInt8]], timeoutMs: Int32) -> Result {
        precondition(payloads.count <= maxPushes, "at most \(maxPushes) pushes per batch")
        var timeout = timeval(tv_sec: Int(timeoutMs / 1000), tv_usec: Int((timeoutMs % 1000) * 1000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request = openingLine + [0x0a]
        for payload in payloads { request += payload + [0x0a] }
        let noAcks = Result.acked(Array(repeating: .noAck("write failed: errno \(errno)"), count: payloads.count))
        guard UnixSocket.sendAll(fd, request) else { return noAcks }
        shutdown(fd, Int32(SHUT_WR))
        return parse(readAll(fd), count: payloads.count)
    }

    /// What the worker answered, for `count` pushes sent.
    public static func parse(_ reply: [UInt8], count: Int) -> Result {
        var lines = reply.split(separator: 0x0a, omittingEmptySubsequences: false).map(Array.init)
        if reply.last == 0x0a { lines.removeLast() } else if !lines.isEmpty { lines.removeLast() }  // a cut line is no ack
        guard let first = lines.first else {
            return .acked(Array(repeating: .noAck("no answer from the worker"), count: count))
        }
        guard first == acceptedLine else {
            if PushAck.parse(first) != nil { return .notSpoken }
            return .acked(Array(repeating: .noAck("no valid answer line"), count: count))
        }
        var outcomes: [PushExchange.Outcome] = []
        for index in 0..<count {
            let lineIndex = index + 1
            if lineIndex < lines.count, let ack = PushAck.parse(lines[lineIndex]) {
                outcomes.append(.acked(ack))
            } else {
                outcomes.append(.noAck(lineIndex < lines.count ? "no valid ack line" : "no ack for this push"))
            }
        }
        return .acked(outcomes)
    }

    private static func readAll(_ fd: Int32) -> [UInt8] {
        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        let limit = (maxPushes + 1) * PushExchange.maxAckBytes
        while reply.count < limit {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                break
            }
            if n == 0 { break }
            reply += chunk[0..<n]
        }
        return reply
    }
}
