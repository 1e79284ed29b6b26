import Glibc

/// The write end the signal handler writes to; set once, before the handlers are installed.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// Signals turned into bytes on a pipe, so the chat's one `poll` sees them with its input:
/// SIGWINCH (resize), SIGTERM, SIGINT and SIGHUP (quit, restoring the terminal).
///
/// ```swift
/// let signals = try SignalPipe.install()
/// // poll signals.readEnd; then:
/// for signal in signals.drain() { if signal == SIGWINCH { redraw() } }
/// ```
struct SignalPipe {
    let readEnd: Int32

    static func install() -> SignalPipe? {
        var fds: [Int32] = [-1, -1]
        guard makePipe(&fds) else { return nil }
        signalPipeWriteEnd = fds[1]
        for signal in [SIGWINCH, SIGTERM, SIGINT, SIGHUP] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = Glibc.write(signalPipeWriteEnd, &byte, 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signal, &action, nil)
        }
        return SignalPipe(readEnd: fds[0])
    }

    /// The signals that arrived since the last call.
    func drain() -> [Int32] {
        var out: [Int32] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(readEnd, &buffer, buffer.count)
            guard count > 0 else { return out }
            out += buffer[0..<count].map { Int32($0) }
        }
    }
}

/// A pipe the library's observers write a byte to (from their own threads) so the chat's
/// `poll` wakes and draws the newest snapshots; many wakes before a draw become one.
///
/// ```swift
/// let wake = WakePipe()!
/// list.observe { _ in wake.wake() }
/// ```
final class WakePipe: Sendable {
    let readEnd: Int32
    let writeEnd: Int32

    init?() {
        var fds: [Int32] = [-1, -1]
        guard makePipe(&fds) else { return nil }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)   // a full pipe already holds a wake
    }

    func drain() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }
}

/// A pipe whose ends are non-blocking and close on exec (Glibc's `pipe2` is not exported to Swift).
private func makePipe(_ fds: inout [Int32]) -> Bool {
    guard pipe(&fds) == 0 else { return false }
    for fd in fds {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }
    return true
}
