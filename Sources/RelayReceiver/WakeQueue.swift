import Glibc
import RelayTransport
import Synchronization

/// Where the relay client's threads leave work for the receiver's one loop: mailboxes that
/// got a message, a mailbox whose connection came back. Each call also writes a byte
/// to a pipe that the loop polls, so the loop sleeps in poll(2) until there is work.
///
/// ```swift
/// let queue = WakeQueue()
/// queue.mailboxReceived(box)          // on the C client's thread
/// let work = queue.take()             // on the loop: (mailboxes, reconnected)
/// ```
final class WakeQueue: MailboxWakeHandler, Sendable {
    private struct Pending {
        var mailboxes: Set<Mailbox> = []
        /// Mailboxes whose own connection came back (each identity has one, docs/adr/0044).
        var reconnected: Set<Mailbox> = []
    }

    private let pending = Mutex(Pending())
    /// [read end, write end], both non-blocking.
    let pipe: (read: Int32, write: Int32)

    init() {
        var fds: [Int32] = [-1, -1]
        _ = Glibc.pipe(&fds)
        for fd in fds { _ = fcntl(fd, F_SETFL, O_NONBLOCK); _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        pipe = (fds[0], fds[1])
    }

    deinit {
        close(pipe.read)
        close(pipe.write)
    }

    func mailboxReceived(_ mailbox: Mailbox) {
        pending.withLock { _ = $0.mailboxes.insert(mailbox) }
        poke()
    }

    /// After the connection of `mailbox` came back: it may have messages we were not told of,
    /// and messages delivered but not acked before the loss.
    func reconnected(_ mailbox: Mailbox) {
        pending.withLock { _ = $0.reconnected.insert(mailbox) }
        poke()
    }

    func take() -> (mailboxes: Set<Mailbox>, reconnected: Set<Mailbox>) {
        var bytes = [UInt8](repeating: 0, count: 256)
        while bytes.withUnsafeMutableBytes({ read(pipe.read, $0.baseAddress, $0.count) }) > 0 {}
        return pending.withLock { state in
            defer { state = Pending() }
            return (state.mailboxes, state.reconnected)
        }
    }

    private func poke() {
        var byte: UInt8 = 1
        _ = write(pipe.write, &byte, 1)  // a full pipe already wakes the loop
    }
}
