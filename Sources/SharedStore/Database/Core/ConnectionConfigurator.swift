import GRDBSQLite
import Glibc
import SottoWire

/// The one place every pragma is set, for every connection of both processes: the worker's
/// and the daemon's connections all come from ``SQLiteConnection/open(path:profile:create:readOnly:)``,
/// which calls ``configure(_:profile:)``.
///
/// ```swift
/// try ConnectionConfigurator.configure(conn.handle, profile: .daemon)
/// ```
public enum ConnectionConfigurator {
    /// Configures `handle`. Safe on read-only connections: journal_mode is only written when
    /// the file is not already in WAL mode, so an already-WAL file needs no header write.
    public static func configure(_ handle: OpaquePointer, profile: ConnectionProfile) throws(StoreError) {
        let conn = SQLiteConnection(borrowing: handle)

        // First, so that every statement below already waits for a lock.
        sqlite3_busy_timeout(handle, profile.busyTimeoutMs)

        // Keep -wal and -shm when this connection closes last: otherwise the last closer
        // checkpoints and deletes the WAL, and the next worker has to recreate it (and take
        // an exclusive lock to do so). Per connection, so set on each one.
        var persist: Int32 = 1
        let fcntl = sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
        guard fcntl == SQLITE_OK else { throw StoreError.from(code: fcntl, handle: handle) }

        try switchToWAL(conn, profile: profile)

        // An ack is only sent after a durable commit (PROTOCOL §2): FULL fsyncs the WAL at commit.
        try conn.execute("""
            PRAGMA synchronous = \(SyncMutation.skips(.walCommit) ? "OFF" : "FULL");
            PRAGMA foreign_keys = ON;
            PRAGMA secure_delete = ON;
            PRAGMA journal_size_limit = \(profile.journalSizeLimit);
            PRAGMA cache_size = \(profile.cacheSize);
            PRAGMA mmap_size = \(profile.mmapSize);
            PRAGMA temp_store = \(profile.tempStore.rawValue);
            """)
    }
}

extension ConnectionConfigurator {
    /// Reads journal_mode (the first read of the file: a non-SQLite file fails here) and
    /// switches to WAL when needed. Switching takes an exclusive lock without calling the
    /// busy handler (measured: two connections racing on a new file get SQLITE_BUSY at once),
    /// so a busy switch is retried with a short backoff until the profile's busy timeout.
    static func switchToWAL(_ conn: SQLiteConnection, profile: ConnectionProfile) throws(StoreError) {
        let deadline = MonotonicClock.nowNs() + UInt64(max(0, profile.busyTimeoutMs)) * 1_000_000
        var backoffMs = 1
        while true {
            let mode = try conn.queryOne("PRAGMA journal_mode")?.optionalString(0)
            if mode?.lowercased() == "wal" { return }
            do throws(StoreError) {
                let newMode = try conn.queryOne("PRAGMA journal_mode = WAL")?.optionalString(0)
                guard newMode?.lowercased() == "wal" else {
                    throw StoreError.io("could not switch the database to WAL mode")
                }
                return
            } catch .busy where MonotonicClock.nowNs() < deadline {
                var pause = timespec(tv_sec: 0, tv_nsec: backoffMs * 1_000_000)
                nanosleep(&pause, nil)
                backoffMs = min(backoffMs * 2, 20)
            }
        }
    }
}

/// What a connection's pragmas actually are, read back (tests compare it with the profile).
///
/// ```swift
/// let report = try PragmaReport.read(conn.handle)
/// #expect(report.journalMode == "wal" && report.synchronous == 2 && report.persistWAL)
/// ```
public struct PragmaReport: Sendable, Equatable {
    public var journalMode: String
    /// 2 is FULL.
    public var synchronous: Int64
    public var foreignKeys: Bool
    public var secureDelete: Bool
    public var journalSizeLimit: Int64
    public var busyTimeoutMs: Int64
    public var cacheSize: Int64
    public var mmapSize: Int64
    public var tempStore: Int64
    public var persistWAL: Bool

    public init(journalMode: String, synchronous: Int64, foreignKeys: Bool, secureDelete: Bool,
                journalSizeLimit: Int64, busyTimeoutMs: Int64, cacheSize: Int64, mmapSize: Int64,
                tempStore: Int64, persistWAL: Bool) {
        self.journalMode = journalMode
        self.synchronous = synchronous
        self.foreignKeys = foreignKeys
        self.secureDelete = secureDelete
        self.journalSizeLimit = journalSizeLimit
        self.busyTimeoutMs = busyTimeoutMs
        self.cacheSize = cacheSize
        self.mmapSize = mmapSize
        self.tempStore = tempStore
        self.persistWAL = persistWAL
    }

    /// What ``ConnectionConfigurator/configure(_:profile:)`` promises for `profile`.
    public static func expected(for profile: ConnectionProfile) -> PragmaReport {
        PragmaReport(journalMode: "wal", synchronous: 2, foreignKeys: true, secureDelete: true,
                     journalSizeLimit: profile.journalSizeLimit, busyTimeoutMs: Int64(profile.busyTimeoutMs),
                     cacheSize: profile.cacheSize, mmapSize: profile.mmapSize,
                     tempStore: Int64(profile.tempStore.rawValue), persistWAL: true)
    }

    /// Reads every pragma ``ConnectionConfigurator`` sets.
    public static func read(_ handle: OpaquePointer) throws(StoreError) -> PragmaReport {
        let conn = SQLiteConnection(borrowing: handle)
        func int(_ pragma: String) throws(StoreError) -> Int64 {
            guard let row = try conn.queryOne("PRAGMA \(pragma)") else { return -1 }
            return try row.int64(0)
        }
        var persist: Int32 = -1   // -1 queries the current value
        let code = sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
        guard code == SQLITE_OK else { throw StoreError.from(code: code, handle: handle) }
        return PragmaReport(
            journalMode: try conn.queryOne("PRAGMA journal_mode")?.string(0) ?? "",
            synchronous: try int("synchronous"),
            foreignKeys: try int("foreign_keys") == 1,
            secureDelete: try int("secure_delete") == 1,
            journalSizeLimit: try int("journal_size_limit"),
            busyTimeoutMs: try int("busy_timeout"),
            cacheSize: try int("cache_size"),
            mmapSize: try int("mmap_size"),
            tempStore: try int("temp_store"),
            persistWAL: persist == 1)
    }
}
