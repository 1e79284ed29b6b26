import Glibc

/// The few Linux socket calls Swift's Glibc module hides behind `_GNU_SOURCE`
/// (`accept4`, `struct ucred`), done with what it does export.
///
/// ```swift
/// let client = UnixSocket.accept(listener, nonBlocking: true)
/// if UnixSocket.peerCredentials(client)?.uid == geteuid() { … }
/// ```
public enum UnixSocket {
    /// `struct ucred` from <sys/socket.h>: the same layout on every Linux architecture.
    public struct PeerCredentials: Equatable, Sendable {
        public var pid: Int32 = 0
        public var uid: UInt32 = 0
        public var gid: UInt32 = 0
    }

    /// Accepts one connection, close-on-exec, optionally non-blocking. -1 with errno set.
    public static func accept(_ listener: Int32, nonBlocking: Bool) -> Int32 {
        let fd = Glibc.accept(listener, nil, nil)
        guard fd >= 0 else { return fd }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        if nonBlocking {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        return fd
    }

    /// The peer's pid, uid and gid (`SO_PEERCRED`), as the kernel recorded them at connect.
    public static func peerCredentials(_ fd: Int32) -> PeerCredentials? {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
              length == socklen_t(MemoryLayout<PeerCredentials>.size) else { return nil }
        return credentials
    }
}
