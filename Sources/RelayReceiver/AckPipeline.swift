import SottoWire
import Glibc
import RelayTransport
import Synchronization

/// Acks on a thread of its own, so the relay's round trips for one batch overlap the worker
/// storing the next (docs/adr/0026: under Accept=no the ack was 60 % of a relayed push's
/// cost). Each message is acked only after the worker's ok. Of a batch, every message but
/// the last is acked without waiting for the relay's reply and the last with AckSync, which
/// returns after the relay handled the earlier acks of the same connection (docs/adr/0027:
/// one round trip per batch instead of one per message). A crash with acks queued, or an
/// ack lost, means redeliveries, which the worker's dedupe answers `duplicate`.
/// At most `capacity` batches wait; `enqueue` blocks beyond that.
///
/// ```swift
/// let acks = AckPipeline(capacity: 64)
/// acks.enqueue([message], label: "message 7 of sotto.mb.…")   // after the worker's ok
/// ```
final class AckPipeline: Sendable {
    /// A fetched message handed from the loop to the ack thread: never used by both at once.
    private struct Handoff: @unchecked Sendable {
        let messages: [RelayMessage]
        let label: String
    }

    private struct State {
        var queue: [Handoff] = []
        var head = 0
        /// The ack thread is settling an item it took off the queue.
        var busy = false
        var count: Int { queue.count - head }
    }

    private let state = Mutex(State())
    private let capacity: Int
    /// Wakes the ack thread (one byte per message) and, the other way, a blocked `enqueue`.
    private let work: (read: Int32, write: Int32)
    private let room: (read: Int32, write: Int32)

    init(capacity: Int = 64) {
        self.capacity = capacity
        work = Self.pipePair()
        room = Self.pipePair()
        // Never block the ack thread: a byte per ack piles up while nobody waits for room; a
        // full pipe already holds the wakeup.
        _ = fcntl(room.write, F_SETFL, O_NONBLOCK)
        ProcessThread.start { [self] in run() }
    }

    func enqueue(_ messages: [RelayMessage], label: String) {
        while state.withLock({ $0.count >= capacity }) {
            var byte: UInt8 = 0
            _ = read(room.read, &byte, 1)
        }
        state.withLock { $0.queue.append(Handoff(messages: messages, label: label)) }
        var byte: UInt8 = 1
        _ = write(work.write, &byte, 1)
    }

    /// Waits until every enqueued batch is settled (its last ack confirmed by the relay, or
    /// failed), at most `timeoutMs`; true when nothing is left. For a stop: only the loop
    /// enqueues, so nothing is added while it waits.
    func waitUntilSettled(timeoutMs: Int64) -> Bool {
        let deadline = MonotonicClock.nowMs() + timeoutMs
        while state.withLock({ $0.count > 0 || $0.busy }) {
            let left = deadline - MonotonicClock.nowMs()
            guard left > 0 else { return false }
            var fds = [pollfd(fd: room.read, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 1, Int32(min(left, 1_000))) > 0 {
                var byte: UInt8 = 0
                _ = read(room.read, &byte, 1)
            }
        }
        return true
    }

    private func run() {
        while true {
            var byte: UInt8 = 0
            guard read(work.read, &byte, 1) == 1 else { continue }
            let next = state.withLock { state -> Handoff? in
                guard state.count > 0 else { return nil }
                state.busy = true
                let item = state.queue[state.head]
                state.head += 1
                if state.head > 256, state.head * 2 > state.queue.count {
                    state.queue.removeFirst(state.head)
                    state.head = 0
                }
                return item
            }
            guard let next else { continue }
            var unsent = 0
            for message in next.messages.dropLast() {
                do throws(RelayError) { try message.ackWithoutConfirmation() } catch { unsent += 1 }
            }
            if unsent > 0 { RelaydLog.warning("\(unsent) acks of \(next.label) not sent; they will be redelivered") }
            do throws(RelayError) {
                try next.messages.last?.ack()
            } catch {
                // Not acked: the relay redelivers it after the ack wait; the worker answers duplicate.
                RelaydLog.warning("ack of \(next.label) failed (\(error)); it will be redelivered")
            }
            state.withLock { $0.busy = false }
            _ = write(room.write, &byte, 1)
        }
    }

    private static func pipePair() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }
}
