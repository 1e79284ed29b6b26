import Foundation
import SottoWire
import TestSupport
import Testing

/// `UnixSocket.bind` makes the socket file 0600 by the socket's own mode, never by changing the
/// process's umask (which other threads' files and directories would get meanwhile).
@Suite("Unix sockets")
struct UnixSocketTests {
    @Test("a bound socket file is 0600 whatever the umask gives (this process's: 022 or so), and the umask is left as it was")
    func boundSocketIsPrivate() throws {
        let tmp = try TemporaryDirectory(prefix: "us")
        for (name, type) in [("stream.sock", UnixSocket.streamType), ("datagram.sock", UnixSocket.datagramType)] {
            let path = tmp.path + "/" + name
            let fd = UnixSocket.bind(path, type: type)
            #expect(fd >= 0, "bind \(name): errno \(errno)")
            defer { close(fd) }
            var info = stat()
            #expect(stat(path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600, "\(name): \(String(info.st_mode & 0o777, radix: 8))")
        }
        // A directory made now gets the umask it always had: 0700 asked, 0700 made (umask 0o077 or laxer).
        let directory = tmp.path + "/after"
        #expect(mkdir(directory, 0o700) == 0)
        var info = stat()
        #expect(stat(directory, &info) == 0 && info.st_mode & 0o777 == 0o700)
    }
}
