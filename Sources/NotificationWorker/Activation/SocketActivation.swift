import Glibc

/// How this worker was started, detected once at launch from the file descriptors systemd
/// (or `systemd-socket-activate`) passed in.
///
/// ```swift
/// switch SocketActivation.detect() {
/// case .connection(let read, let write): handleOnePush(read, write)   // Accept=yes
/// case .listeners(let fds): serve(fds, idle: 10)                      // Accept=no
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
        let fds = ListenFDs.take()
        if !fds.isEmpty {
            if fds.allSatisfy({ ListenFDs.isStreamSocket($0, listening: true) }) { return .listeners(fds) }
            if fds.count == 1, ListenFDs.isStreamSocket(fds[0], listening: false) {
                return .connection(read: fds[0], write: fds[0])
            }
            return .none
        }
        // StandardInput=socket (or systemd-socket-activate --inetd): the connection is stdin/stdout.
        if ListenFDs.isStreamSocket(STDIN_FILENO, listening: false) {
            return .connection(read: STDIN_FILENO, write: STDOUT_FILENO)
        }
        return .none
    }
}
