import Glibc
import Synchronization

/// SIGTERM and SIGINT, taken as a request to stop instead of killing the process: blocked in
/// every thread (so `install()` must run before any other thread starts, the ack thread and
/// the relay client's included) and taken by `sigwait` on a thread of its own, which wakes
/// the loop through a pipe. So `systemctl stop`, an upgrade or a logout lets relayd send the
/// acks of what the worker already stored, and the next start neither holds those mailboxes
/// back one ack wait nor gets the messages again.
///
/// ```swift
/// let stops = StopSignals.install()
/// if let name = stops.received() { RelaydLog.info("stopping on \(name)") }
/// ```
final class StopSignals: Sendable {
    /// Readable once a stop signal came; the loop polls it.
    let fd: Int32
    private let writeEnd: Int32
    private let signal = Atomic<Int32>(0)

    private init(fds: (Int32, Int32)) {
        fd = fds.0
        writeEnd = fds.1
    }

    static func install() -> StopSignals {
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        for end in fds { _ = fcntl(end, F_SETFL, O_NONBLOCK); _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let stops = StopSignals(fds: (fds[0], fds[1]))
        var set = Self.signalSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
        ProcessThread.start { stops.waitForSignal() }
        return stops
    }

    /// The name of the stop signal that came, or nil. Does not block.
    func received() -> String? {
        switch signal.load(ordering: .acquiring) {
        case 0: nil
        case SIGINT: "SIGINT"
        default: "SIGTERM"
        }
    }

    private func waitForSignal() {
        var set = Self.signalSet()
        var number: Int32 = 0
        while sigwait(&set, &number) != 0 {}
        signal.store(number, ordering: .releasing)
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    private static func signalSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        return set
    }
}
