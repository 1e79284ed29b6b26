import Foundation
import SottoWire

/// A listener on a control socket path that answers each connection, in order, with the
/// lines scripted for it (after reading its first request line), then closes it: what the
/// library is fed when the bytes on the socket are wrong or the connection drops at a chosen
/// place, without a daemon. Connections past the script are closed at once.
///
/// ```swift
/// let peer = try ScriptedControlPeer(path: dir + "/control.sock", connections: [["not json\n"]])
/// defer { peer.stop() }
/// peer.requests   // the first line each connection sent
/// ```
final class ScriptedControlPeer: @unchecked Sendable {
    let path: String
    private let listener: Int32
    private let lock = NSLock()
    private var scripts: [[String]]
    private var received: [String] = []

    init(path: String, connections: [[String]]) throws {
        self.path = path
        scripts = connections
        listener = UnixSocket.bind(path, type: Int32(SOCK_STREAM.rawValue))
        guard listener >= 0, listen(listener, 16) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        Thread { [self] in serve() }.start()
    }

    /// The first line of each connection so far (a subscribe's params show its `since`).
    var requests: [String] { lock.withLock { received } }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        unlink(path)
    }

    private func serve() {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            let script = lock.withLock { scripts.isEmpty ? nil : scripts.removeFirst() }
            if let script {
                if let request = Self.readLine(fd) { lock.withLock { received.append(request) } }
                for line in script { _ = UnixSocket.sendAll(fd, Array(line.utf8)) }
            }
            close(fd)
        }
    }

    private static func readLine(_ fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1 {
            if byte == 0x0a { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return nil
    }
}
