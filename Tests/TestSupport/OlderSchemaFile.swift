import SharedStore

/// A database file left at an older schema version with some rows in it: what a device
/// upgraded from an earlier build has, for the migration and repair tests.
///
/// ```swift
/// let conn = try OlderSchemaFile.open(path, version: 3, rows: "INSERT INTO inbox(…) VALUES (…);")
/// try Migrator.migrate(conn)
/// ```
public enum OlderSchemaFile {
    /// Creates `path` at `version` (the first `version` migration steps, its user_version) and
    /// runs `rows` in the same transaction. The connection is returned open.
    public static func open(_ path: String, version: Int, rows: String) throws -> SQLiteConnection {
        let conn = try SQLiteConnection.open(path: path, profile: .worker, create: true)
        try conn.immediateTransaction { () throws(StoreError) in
            for step in Schema.migrations.prefix(version) { try conn.execute(step.sql) }
            try conn.execute("PRAGMA user_version = \(version)")
            try conn.execute(rows)
        }
        return conn
    }
}
