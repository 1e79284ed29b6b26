import GRDBSQLite
import SharedStore

/// One WAL checkpoint on a connection, with a busy budget of its own: the daemon's
/// `WALKeeper` is the only caller (docs/adr/0003), so a checkpoint never waits longer than its
/// budget on a worker's write, and the connection's normal busy timeout is restored after.
///
/// ```swift
/// let done = WALCheckpoint.run(.truncate, busyBudgetMs: 50, normalBusyMs: 10_000, on: writer)
/// // true: every frame copied back, and for .truncate the -wal file is 0 bytes
/// ```
public enum WALCheckpoint {
    /// SQLite's checkpoint modes this package uses.
    public enum Mode: Sendable {
        /// Copies what it can, waits for nobody.
        case passive
        /// Copies everything and resets the WAL to zero bytes; needs every reader gone.
        case truncate

        var sqliteMode: Int32 {
            switch self {
            case .passive: return SQLITE_CHECKPOINT_PASSIVE
            case .truncate: return SQLITE_CHECKPOINT_TRUNCATE
            }
        }
    }

    /// Runs one checkpoint of `mode` on `conn` (outside any transaction). True when it
    /// completed: for `.passive` that SQLite accepted it, for `.truncate` that every frame was
    /// copied back and the WAL reset. A busy reader or writer past `busyBudgetMs` is false.
    public static func run(_ mode: Mode, busyBudgetMs: Int32, normalBusyMs: Int32,
                           on conn: SQLiteConnection) -> Bool {
        sqlite3_busy_timeout(conn.handle, busyBudgetMs)
        defer { sqlite3_busy_timeout(conn.handle, normalBusyMs) }
        var logFrames: Int32 = 0
        var checkpointed: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(conn.handle, "main", mode.sqliteMode, &logFrames, &checkpointed)
        return code == SQLITE_OK && (mode == .passive || logFrames == checkpointed)
    }
}
