/// Applies the pending ``Schema`` steps. Only the daemon calls it (on its writer connection
/// at open, and `sotto repair` on a fresh file); called outside a transaction it opens its own
/// `BEGIN IMMEDIATE`, inside one it runs in it. Either way the version is read after the write lock is held, so two
/// daemons racing both end fine: the second finds nothing to do.
///
/// ```swift
/// try Migrator.migrate(conn)   // user_version == Schema.currentVersion afterwards
/// ```
public enum Migrator {
    /// Returns the number of steps applied (0 when already current).
    @discardableResult
    public static func migrate(_ conn: SQLiteConnection) throws(StoreError) -> Int {
        if conn.isInTransaction {
            return try applyPending(conn)
        }
        return try conn.immediateTransaction { () throws(StoreError) -> Int in
            try applyPending(conn)
        }
    }

    private static func applyPending(_ conn: SQLiteConnection) throws(StoreError) -> Int {
        let found = try SchemaCheck.userVersion(conn)
        let known = Schema.currentVersion
        if found > known { throw .schemaTooNew(found: found, known: known) }
        guard found < known else { return 0 }
        for index in Int(found)..<Schema.migrations.count {
            let step = Schema.migrations[index]
            if !step.sql.isEmpty { try conn.execute(step.sql) }
            try step.rewrite?(conn)
            try conn.execute("PRAGMA user_version = \(index + 1)")
        }
        return Int(known - found)
    }
}
