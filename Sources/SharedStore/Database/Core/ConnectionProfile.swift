/// How a connection is tuned: busy timeout and memory. The daemon and the worker differ only
/// here; the pragmas that matter for correctness are the same for both
/// (see ``ConnectionConfigurator``).
///
/// ```swift
/// let p = ConnectionProfile.worker(environment: ["SOTTO_BUSY_TIMEOUT_MS": "2000"])
/// p.busyTimeoutMs   // 2000
/// ```
public struct ConnectionProfile: Sendable, Equatable {
    /// Where SQLite keeps temporary tables and indices.
    public enum TempStore: Int32, Sendable {
        case file = 1
        case memory = 2
    }

    /// How long a statement waits for another connection's lock before `StoreError.busy`.
    public var busyTimeoutMs: Int32
    /// `PRAGMA cache_size`: negative is KiB, positive is pages.
    public var cacheSize: Int64
    /// `PRAGMA mmap_size` in bytes; 0 disables memory mapping.
    public var mmapSize: Int64
    public var tempStore: TempStore
    /// `PRAGMA journal_size_limit` in bytes: how large a persisted WAL may stay after a checkpoint.
    public var journalSizeLimit: Int64

    public init(busyTimeoutMs: Int32, cacheSize: Int64, mmapSize: Int64, tempStore: TempStore,
                journalSizeLimit: Int64 = 4 * 1024 * 1024) {
        self.busyTimeoutMs = busyTimeoutMs
        self.cacheSize = cacheSize
        self.mmapSize = mmapSize
        self.tempStore = tempStore
        self.journalSizeLimit = journalSizeLimit
    }

    // MARK: Presets

    /// The long-running daemon: 10 s busy timeout, 8 MiB cache, 64 MiB mmap.
    public static let daemon = ConnectionProfile(
        busyTimeoutMs: 10_000, cacheSize: -8 * 1024, mmapSize: 64 * 1024 * 1024, tempStore: .memory)

    /// The short-lived worker: 5 s busy timeout and the `small` memory profile
    /// (256 KiB cache, no mmap, temp data in files) to stay inside its 12 MB.
    public static let worker = ConnectionProfile(
        busyTimeoutMs: 5_000, cacheSize: -256, mmapSize: 0, tempStore: .file)

    /// The environment variable that overrides the busy timeout of either profile.
    public static let busyTimeoutVariable = "SOTTO_BUSY_TIMEOUT_MS"

    /// ``daemon`` with `SOTTO_BUSY_TIMEOUT_MS` applied.
    public static func daemon(environment: [String: String]) -> ConnectionProfile {
        daemon.applying(environment: environment)
    }

    /// ``worker`` with `SOTTO_BUSY_TIMEOUT_MS` applied.
    public static func worker(environment: [String: String]) -> ConnectionProfile {
        worker.applying(environment: environment)
    }

    /// Applies `SOTTO_BUSY_TIMEOUT_MS` when it is a whole number in 0...600_000; anything
    /// else is ignored and the preset's value kept.
    public func applying(environment: [String: String]) -> ConnectionProfile {
        var copy = self
        if let text = environment[Self.busyTimeoutVariable], text.utf8.count <= 7,
           let ms = Int32(text), (0...600_000).contains(ms) {
            copy.busyTimeoutMs = ms
        }
        return copy
    }
}
