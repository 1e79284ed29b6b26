import Glibc
import SharedStore

/// Keeps the WAL bounded when the daemon is down (docs/adr/0020). After its ack, a worker
/// whose `-wal` has grown past `aboveBytes` closes its database connection. SQLite's close
/// takes an EXCLUSIVE lock on the database file without waiting; it gets it only when no
/// other connection of any process has the file open (the daemon's pool always has one),
/// and then checkpoints every frame and truncates the persistent WAL to zero
/// (`journal_size_limit`). With anyone else attached the close is a plain close and the
/// WAL stays the daemon's `WALKeeper`'s business (docs/adr/0003).
///
/// ```swift
/// let reset = WALReset(environment: env)          // 1 MiB, or SOTTO_WORKER_WAL_RESET_BYTES
/// reset.aboveBytes                                // 1_048_576
/// ```
struct WALReset: Equatable {
    /// The environment variable that overrides the threshold: 0 … 1 GiB bytes; anything else
    /// keeps the default.
    static let variable = "SOTTO_WORKER_WAL_RESET_BYTES"
    /// ≈ 25 pushes at ≈ 37 KB each: a worker that starts alone recovers at most this much WAL
    /// into a fresh wal-index, and one push in ≈ 25 pays for the reset (docs/adr/0020).
    static let defaultAboveBytes: Int64 = 1 << 20

    let aboveBytes: Int64

    init(aboveBytes: Int64 = WALReset.defaultAboveBytes) {
        self.aboveBytes = aboveBytes
    }

    init(environment: [String: String]) {
        if let text = environment[Self.variable], text.utf8.count <= 10,
           let bytes = Int64(text), (0...(1 << 30)).contains(bytes) {
            self.init(aboveBytes: bytes)
        } else {
            self.init()
        }
    }

    static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }
}
