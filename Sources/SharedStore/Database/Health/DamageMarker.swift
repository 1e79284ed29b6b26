#if canImport(Glibc)
import Glibc
#endif
import SottoWire

/// `shared.sqlite.damaged` next to the database: the file-level record that the database is
/// known to be damaged. Whoever meets the damage first writes it (the daemon's start-up check,
/// any SQLITE_CORRUPT the daemon or a worker runs into); the worker looks for it with one
/// `lstat` before every write and then refuses the push with a retryable error instead of
/// acking it into a damaged file; the daemon removes it once a full check finds the file
/// sound again (docs/adr/0018).
///
/// ```swift
/// let marker = DamageMarker(databasePath: group.databasePath)
/// if marker.isPresent { /* refuse: retry later */ }
/// marker.mark("SQLITE_CORRUPT_INDEX in a write")   // keeps the first reason
/// ```
public struct DamageMarker: Sendable, Equatable {
    public let path: String

    public init(databasePath: String) {
        self.path = databasePath + ".damaged"
    }

    /// One `lstat`: anything at the path counts (even a file someone made by hand).
    public var isPresent: Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The reason recorded by whoever marked it first, or nil when there is no marker.
    public func reason() -> String? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else { return "" }
        var text = Array(buffer.prefix(count))
        while text.last == 0x0a { text.removeLast() }
        return String(decoding: text, as: UTF8.self)
    }

    /// Records the damage unless it is already recorded (the first reason is the one that
    /// says where it started). Durable: written, fsynced, linked into place, and the directory
    /// fsynced, so a power cut cannot take the marker away while the damage stays (ADR 0058).
    /// False when the marker could not be written or made durable (a full disk, an I/O
    /// error): callers still refuse.
    @discardableResult
    public func mark(_ reason: String) -> Bool {
        if isPresent { return true }
        let temp = path + ".tmp-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        let bytes = Array((reason + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced else {
            unlink(temp)
            return false
        }
        let linked = link(temp, path) == 0 || errno == EEXIST
        unlink(temp)
        return linked && (SyncMutation.skips(.damageMarkerDirectory) || DirectorySync.fsync(DirectorySync.parent(of: path)) == nil)
    }

    /// Removes the marker (after a full check found the file sound). False if it stays.
    @discardableResult
    public func clear() -> Bool {
        unlink(path) == 0 || errno == ENOENT
    }
}
