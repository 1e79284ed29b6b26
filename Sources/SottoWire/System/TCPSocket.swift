import Glibc

/// A TCP connection to a `tcp:HOST:PORT` push endpoint (PROTOCOL §1): every address
/// `getaddrinfo` gives, in order, until one connects. Lives here, beside ``UnixSocket``, and
/// not in the daemon: in a module that also imports C libraries' headers, Glibc's socket
/// constants were at times not found on a fresh build.
///
/// ```swift
/// switch TCPSocket.connect(host: "127.0.0.1", port: 7000) {
/// case .connected(let fd): …
/// case .unresolved, .refused: …
/// }
/// ```
public enum TCPSocket {
    public enum Outcome: Equatable {
        case connected(Int32)
        case unresolved
        case refused
    }

    public static func connect(host: String, port: UInt16) -> Outcome {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &results) == 0, let first = results else { return .unresolved }
        defer { freeaddrinfo(results) }
        var info: UnsafeMutablePointer<addrinfo>? = first
        while let current = info {
            let fd = socket(current.pointee.ai_family, current.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), current.pointee.ai_protocol)
            if fd >= 0 {
                if Glibc.connect(fd, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 { return .connected(fd) }
                close(fd)
            }
            info = current.pointee.ai_next
        }
        return .refused
    }
}
