import GRDBSQLite

/// SQLite's own heap in this process: what its page caches and statements hold. `sotto status`
/// shows the daemon's, so a memory soak can tell SQLite's part of the private memory from the
/// rest (docs/adr/0053).
///
/// ```swift
/// SQLiteHeap.usedBytes        // e.g. 1_153_024
/// ```
public enum SQLiteHeap {
    /// Bytes SQLite holds now (`sqlite3_memory_used`).
    public static var usedBytes: Int64 { sqlite3_memory_used() }

    /// The most SQLite held at once since start (`sqlite3_memory_highwater`).
    public static var highwaterBytes: Int64 { sqlite3_memory_highwater(0) }
}
