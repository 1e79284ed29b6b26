import Glibc
import SottoWire

/// Tells the daemon that a worker committed something: one `EventsDatagram` (`{"seq":N,"pid":P}`)
/// to `$XDG_RUNTIME_DIR/sotto/events.sock`. Fire and forget: no daemon listening is normal
/// (it replays change_log when it starts), so every failure is silent.
///
/// ```swift
/// DaemonSignal(socketPath: runtime.eventsSocketPath).send(seq: 42)
/// ```
struct DaemonSignal {
    let socketPath: String

    func send(seq: Int64) {
        UnixSocket.sendDatagram(EventsDatagram(seq: seq, pid: Int64(getpid())).encode(), to: socketPath)
    }
}
