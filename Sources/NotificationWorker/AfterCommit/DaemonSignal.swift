import Glibc

/// Tells the daemon that a worker committed something: one datagram `{"seq":N,"pid":P}` to
/// `$XDG_RUNTIME_DIR/sotto/events.sock`. Fire and forget: no daemon listening is normal
/// (it replays change_log when it starts), so every failure is silent.
///
/// ```swift
/// DaemonSignal(socketPath: runtime.eventsSocketPath).send(seq: 42)
/// ```
struct DaemonSignal {
    let socketPath: String

    func send(seq: Int64) {
        let message = "{\"seq\":\(seq),\"pid\":\(getpid())}"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(socketPath.utf8)
        guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
        }
        var bytes = Array(message.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                sendto(fd, &bytes, bytes.count, Int32(MSG_NOSIGNAL), socketAddress, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }
}
