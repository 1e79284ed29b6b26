import Glibc
import SottoWire

/// A connected stream socket to a device's own endpoint (`unix:/path` or `tcp:host:port`,
/// PROTOCOL §1): what a push is delivered on (`PushDelivery`) and what a stored attachment
/// file is fetched from (`EndpointPieceReader`). Blocking; the caller sets its deadlines and
/// closes it.
///
/// ```swift
/// switch EndpointSocket.connect("unix:/run/user/1000/sotto/push.sock") {
/// case .success(let fd): defer { close(fd) } …
/// case .failure(.unreachable(let why)): … try again later …
/// case .failure(.badEndpoint(let why)): … never deliverable …
/// }
/// ```
enum EndpointSocket {
    enum Failure: Error, Equatable {
        /// Could not connect now: may pass.
        case unreachable(String)
        /// Not an endpoint anything can connect to.
        case badEndpoint(String)
    }

    static func connect(_ endpoint: String) -> Result<Int32, Failure> {
        if endpoint.hasPrefix("unix:") {
            let path = String(endpoint.dropFirst(5))
            guard path.hasPrefix("/") else { return .failure(.badEndpoint("unix endpoint needs an absolute path")) }
            let fd = UnixSocket.connect(path)
            guard fd >= 0 else {
                let code = errno
                return .failure(code == ENAMETOOLONG ? .badEndpoint("socket path too long")
                                                     : .unreachable("connect: \(String(cString: strerror(code)))"))
            }
            return .success(fd)
        }
        if endpoint.hasPrefix("tcp:") {
            let rest = endpoint.dropFirst(4)
            guard let colon = rest.lastIndex(of: ":"), let port = UInt16(rest[rest.index(after: colon)...]) else {
                return .failure(.badEndpoint("tcp endpoint must be tcp:HOST:PORT"))
            }
            var host = String(rest[..<colon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            switch TCPSocket.connect(host: host, port: port) {
            case .connected(let fd): return .success(fd)
            case .unresolved: return .failure(.unreachable("cannot resolve \(host)"))
            case .refused: return .failure(.unreachable("connect to \(host):\(port) failed"))
            }
        }
        return .failure(.badEndpoint("unknown endpoint scheme"))
    }
}
