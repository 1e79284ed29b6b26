import CSystemd
import Glibc

/// How this worker was started, detected once at launch from the file descriptors systemd
/// (or `systemd-socket-activate`) passed in.
///
/// ```swift
/// switch SocketActivation.detect() {
/// case .connection(let fd): handleOnePush(on: fd)          // Accept=yes
/// case .listeners(let fds): serve(fds, idle: 10)           // Accept=no
/// case .none: printUsage()
/// }
/// ```
enum SocketActivation: Equatable {
    /// Accept=yes: one connected stream socket (fd 3 from `LISTEN_FDS`, or stdin under
    /// `StandardInput=socket`). Read one push, ack, exit.
    case connection(read: Int32, write: Int32)
    /// Accept=no: listening sockets to accept pushes on until idle.
    case listeners([Int32])
    /// Not socket-activated.
    case none

    static func detect() -> SocketActivation {
        let count = sd_listen_fds(1)  // 1: unset LISTEN_* so children never inherit them
        if count > 0 {
            let start = sotto_sd_listen_fds_start()
            let fds = (0..<count).map { start + $0 }
            let listening = fds.filter { sd_is_socket($0, AF_UNSPEC, Int32(SOCK_STREAM.rawValue), 1) > 0 }
            if listening.count == fds.count { return .listeners(fds) }
            if fds.count == 1, sd_is_socket(fds[0], AF_UNSPEC, Int32(SOCK_STREAM.rawValue), 0) > 0 {
                return .connection(read: fds[0], write: fds[0])
            }
            return .none
        }
        // StandardInput=socket (or systemd-socket-activate --inetd): the connection is stdin/stdout.
        if sd_is_socket(STDIN_FILENO, AF_UNSPEC, Int32(SOCK_STREAM.rawValue), 0) > 0 {
            return .connection(read: STDIN_FILENO, write: STDOUT_FILENO)
        }
        return .none
    }
}
