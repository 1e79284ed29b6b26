import Glibc
import SottoWire

/// A connection whose first line opened a batch (`PushBatchExchange`, docs/push-batch.md):
/// read the pushes, store them with one commit, answer `acceptedLine` and one ack per push,
/// half-close, then do the after-ack work. The caller drains and closes.
///
/// The batch is honoured only when the first line is exactly the opening line ended by an
/// LF AND the peer is a process of this worker's own user on a Unix socket (`SO_PEERCRED`):
/// `sotto-relayd`.
/// Anything else is a §2 push as before (the opening line is then `malformed_payload`).
///
/// ```swift
/// let (first, rest) = connection.readFirstLine()
/// if case .payload(let line) = first, let rest, PushBatchSession.opens(line, fd: 3) {
///     PushBatchSession(connection: connection, processor: processor).run(startingWith: rest)
/// }
/// ```
struct PushBatchSession {
    let connection: PushConnection
    let processor: PushProcessor

    /// Whether `firstLine` opens a batch from a peer allowed to send one.
    static func opens(_ firstLine: [UInt8], fd: Int32) -> Bool {
        guard firstLine == PushBatchExchange.openingLine else { return false }
        guard let peer = UnixSocket.peerCredentials(fd) else { return false }
        return peer.uid == geteuid()
    }

    func run(startingWith rest: [UInt8]) {
        let lines = PushBatchReader(readFD: connection.readFD).read(startingWith: rest)
        let outcome = processor.handle(batch: lines)
        connection.writeAck(outcome.ackLines)
        connection.endAck()
        outcome.afterAck()
        // One line per batch for the budget (24 MB: systemd/sotto-push@.service).
        var usage = rusage()
        if getrusage(RUSAGE_SELF.rawValue, &usage) == 0 {
            WorkerLog.info("batch done, peak RSS \(usage.ru_maxrss) KiB")
        }
    }
}
