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

// MARK: - Addresses, connect, bind, send

extension UnixSocket {
    /// `sockaddr_un` for `path`, or nil when the path does not fit (108 bytes with its NUL).
    public static func address(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return address
    }

    /// A close-on-exec stream socket connected to `path`; -1 with errno set on failure
    /// (ENAMETOOLONG for a path that does not fit).
    public static func connect(_ path: String) -> Int32 {
        withSocket(path, type: Int32(SOCK_STREAM.rawValue)) { fd, address, length in
            Glibc.connect(fd, address, length)
        }
    }

    /// Socket types for ``bind(_:type:)``, named here so that modules which also import C
    /// libraries' headers need no Glibc socket constant (a fresh build at times lost them there).
    public static let streamType = Int32(SOCK_STREAM.rawValue)
    public static let datagramType = Int32(SOCK_DGRAM.rawValue)
    public static let nonBlockingDatagramType = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)

    /// A close-on-exec socket of `type` bound to `path` (a stale file there is removed first),
    /// created 0600 whatever the umask. -1 with errno set on failure.
    ///
    /// Linux gives the socket file the mode of the socket's own inode (less the umask), so an
    /// `fchmod` before `bind` sets it. Not `umask(0o177)` around the bind, as this did: the umask
    /// is the process's, and a thread making a directory meanwhile got it 0600 (a full test
    /// suite's Keystore and Directory tests, beside 997 light members binding sockets).
    public static func bind(_ path: String, type: Int32) -> Int32 {
        withSocket(path, type: type) { fd, address, length in
            unlink(path)
            guard fchmod(fd, 0o600) == 0 else { return -1 }
            return Glibc.bind(fd, address, length)
        }
    }

    /// A new socket of `type` and `path`'s address handed to `operation` (connect or bind);
    /// the socket if it returned 0, else -1 with its errno (the socket closed).
    private static func withSocket(
        _ path: String, type: Int32,
        _ operation: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) -> Int32 {
        guard var address = address(path) else {
            errno = ENAMETOOLONG
            return -1
        }
        let fd = socket(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return -1 }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                operation(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            errno = code
            return -1
        }
        return fd
    }

    /// Writes all of `bytes` (retrying on EINTR and short writes) without raising SIGPIPE.
    public static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }

    /// Sends one datagram to the socket bound at `path`, without blocking; false if nobody
    /// listens there (or anything else fails).
    @discardableResult
    public static func sendDatagram(_ bytes: [UInt8], to path: String) -> Bool {
        guard var address = address(path) else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bytes.withUnsafeBytes {
                    sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
        return sent == bytes.count
    }
}
