/// Applies the pending ``Schema`` steps. Only the daemon calls it (on its writer connection
/// at open, and `sotto repair` on a fresh file); called outside a transaction it opens its own
/// `BEGIN IMMEDIATE`, inside one it runs in it. Either way the version is read after the write lock is held, so two
/// daemons racing both end fine: the second finds nothing to do.
///
/// ```swift
/// try Migrator.migrate(conn)   // user_version == Schema.currentVersion afterwards
/// ```
public enum Migrator {
    /// Returns the number of steps applied (0 when already current). `target`: stop at that
    /// version (`sotto repair` rebuilds an older file at its own version, so that the daemon's
    /// next start runs the remaining steps with its keys, the sealing of v10 among them).
    @discardableResult
    public static func migrate(_ conn: SQLiteConnection, upTo target: Int64 = Schema.currentVersion) throws(StoreError) -> Int {
        if conn.isInTransaction {
            return try applyPending(conn, target: target)
        }
        return try conn.immediateTransaction { () throws(StoreError) -> Int in
            try applyPending(conn, target: target)
        }
    }

    private static func applyPending(_ conn: SQLiteConnection, target: Int64) throws(StoreError) -> Int {
        let found = try SchemaCheck.userVersion(conn)
        let known = Schema.currentVersion
        if found > known { throw .schemaTooNew(found: found, known: known) }
        let goal = min(max(target, 0), known)
        guard found < goal else { return 0 }
        for index in Int(found)..<Int(goal) {
            let step = Schema.migrations[index]
            if !step.sql.isEmpty { try conn.execute(step.sql) }
            try step.rewrite?(conn)
            try conn.execute("PRAGMA user_version = \(index + 1)")
        }
        return Int(goal - found)
    }
}
