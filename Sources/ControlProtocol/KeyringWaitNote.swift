import Glibc
import SottoWire

/// The one-line reason a daemon is waiting for the master key (`<runtime>/keyring-wait`),
/// which `sotto status` prints when the daemon does not answer yet (it serves nothing before
/// it has the key). Removed once the key is there. Part of the contract between the daemon,
/// which writes it, and its clients, which read it: a file, because the control socket is not
/// open yet while the daemon waits.
///
/// ```swift
/// KeyringWaitNote(runtime: runtime).write("the login keyring is locked")
/// print(KeyringWaitNote(runtime: runtime).read() ?? "not waiting")
/// ```
public struct KeyringWaitNote: Sendable {
    let path: String

    /// How a reason about a Secret Service with no default keyring begins: `sotto status`
    /// then offers no `sotto key import`, which could not store the key either.
    public static let noDefaultKeyring = "the Secret Service has no default keyring"

    /// The longest note read back; anything longer is not one the daemon wrote.
    static let maxBytes = 4096

    public init(runtime: RuntimeDirectory) { path = runtime.path + "/keyring-wait" }

    /// Replaces the note as a whole (a temporary file renamed over it), on one line.
    public func write(_ reason: String) {
        let line = Array((reason.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: " ") + "\n").utf8)
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let written = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written == line.count { rename(temporary, path) } else { unlink(temporary) }
    }

    public func remove() { unlink(path) }

    /// The reason, or nil when the daemon is not waiting (or never wrote one).
    public func read() -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: Self.maxBytes + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            count += n
        }
        guard count <= Self.maxBytes else { return nil }
        let text = String(decoding: bytes[..<count], as: UTF8.self).trimmingWhitespace()
        return text.isEmpty ? nil : text
    }
}
