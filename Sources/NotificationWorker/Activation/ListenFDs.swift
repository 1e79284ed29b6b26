import Glibc

/// The socket-activation protocol of sd_listen_fds(3) and sd_is_socket(3), done here rather
/// than by linking libsystemd: that library drags six more shared objects (gcrypt, zstd,
/// lzma, lz4, libcap, gpg-error) into every worker's start-up for two tiny functions
/// (docs/adr/0001).
///
/// ```swift
/// let fds = ListenFDs.take()                 // [3] under Accept=yes
/// ListenFDs.isStreamSocket(3, listening: true)
/// ```
enum ListenFDs {
    static let start: Int32 = 3

    /// The fds passed by the service manager (`LISTEN_PID` must be this process), marked
    /// close-on-exec; the `LISTEN_*` variables are removed so children never inherit them.
    static func take() -> [Int32] {
        defer {
            unsetenv("LISTEN_PID")
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_FDNAMES")
        }
        guard let pidText = getenv("LISTEN_PID").map({ String(cString: $0) }), pid_t(pidText) == getpid(),
              let countText = getenv("LISTEN_FDS").map({ String(cString: $0) }), let count = Int32(countText),
              count > 0, count < 1024 else { return [] }
        let fds = Array(start..<(start + count))
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return fds
    }

    /// True for a stream socket; with `listening`, only one that is (or is not) listening.
    static func isStreamSocket(_ fd: Int32, listening: Bool? = nil) -> Bool {
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return false }
        guard option(fd, SO_TYPE) == Int32(SOCK_STREAM.rawValue) else { return false }
        if let listening { return (option(fd, SO_ACCEPTCONN) == 1) == listening }
        return true
    }

    private static func option(_ fd: Int32, _ name: Int32) -> Int32? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 ? value : nil
    }
}
