/// What the worker checks before writing: the file's schema is exactly the one this build
/// knows. A worker never migrates; only the daemon does (``Migrator``).
///
/// ```swift
/// try SchemaCheck.verify(conn)   // throws .schemaMissing, .schemaTooNew(found:known:), .corrupt
/// ```
public enum SchemaCheck {
    public static func verify(_ conn: SQLiteConnection) throws(StoreError) {
        let found = try userVersion(conn)
        if found == Schema.currentVersion { return }
        if found == 0 { throw .schemaMissing }
        if found > Schema.currentVersion {
            throw .schemaTooNew(found: found, known: Schema.currentVersion)
        }
        // Older than known but not empty: the daemon has not migrated it yet.
        throw .schemaMissing
    }

    /// `PRAGMA user_version` of the main database.
    public static func userVersion(_ conn: SQLiteConnection) throws(StoreError) -> Int64 {
        try conn.queryOne("PRAGMA user_version")?.int64(0) ?? 0
    }
}
