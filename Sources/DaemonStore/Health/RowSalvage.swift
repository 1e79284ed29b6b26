import SharedStore

/// The SQL half of `sotto repair` (docs/adr/0018): copies every row SQLite can still read from
/// a damaged database file into a fresh, migrated one. Each table is read forward until the
/// first damaged page, then backward from its end, so one garbage leaf page costs only the rows
/// on it; AUTOINCREMENT high points are kept, so a change-feed seq is never handed out twice.
///
/// ```swift
/// let fresh = try SQLiteConnection.open(path: path, profile: .worker, create: true)
/// try Migrator.migrate(fresh)
/// for table in try RowSalvage.copyReadableRows(from: damagedPath, into: fresh) { print(table.table, table.rows) }
/// ```
public enum RowSalvage {
    /// What one table gave up.
    public struct TableResult: Sendable, Equatable {
        public let table: String
        public let rows: Int
        /// The damage that stopped a read (by code name), when one did.
        public let damaged: String?
    }

    public enum Failure: Error, Sendable {
        /// The damaged file cannot even be attached (its header is unreadable).
        case unreadableHeader(StoreError)
        case store(StoreError)
    }

    /// The damaged file's schema version, read through `conn` (attached, as the copy reads
    /// it, so its WAL counts), nil when its header cannot be read: the copy then fails with
    /// that reason.
    public static func schemaVersion(of path: String, on conn: SQLiteConnection) -> Int64? {
        guard (try? conn.execute("ATTACH DATABASE \(SQLQuote.literal(path)) AS damaged")) != nil else { return nil }
        defer { try? conn.execute("DETACH DATABASE damaged") }
        return try? conn.queryOne("PRAGMA damaged.user_version")?.int64(0)
    }

    public static func copyReadableRows(from damagedPath: String,
                                        into fresh: SQLiteConnection) throws(Failure) -> [TableResult] {
        do {
            try fresh.execute("PRAGMA foreign_keys = OFF")
        } catch { throw .store(error) }
        do {
            try fresh.execute("ATTACH DATABASE \(SQLQuote.literal(damagedPath)) AS old")
        } catch {
            throw .unreadableHeader(error)
        }
        do {
            var results: [TableResult] = []
            var tables: [String] = []
            for row in try fresh.query("SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rootpage") {
                tables.append(try row.string(0))
            }
            for table in tables { results.append(try salvage(table, on: fresh)) }
            // AUTOINCREMENT high points: a seq handed out before the damage is never handed out again.
            if let rows = try? fresh.query("SELECT name, seq FROM old.sqlite_sequence") {
                for row in rows {
                    let name = try row.string(0)
                    let seq = try row.int64(1)
                    try fresh.run("INSERT OR IGNORE INTO main.sqlite_sequence(name, seq) VALUES (?, 0)", [.text(name)])
                    try fresh.run("UPDATE main.sqlite_sequence SET seq = max(seq, ?) WHERE name = ?", [.integer(seq), .text(name)])
                }
            }
            try fresh.execute("DETACH DATABASE old")
            try fresh.execute("PRAGMA foreign_keys = ON")
            return results
        } catch { throw .store(error) }
    }

    /// Copies `table`'s readable rows: forward to the first damaged page, then backward. Only
    /// the columns both files have are copied, by name: a file from an older schema (repaired
    /// before the daemon could migrate it) lacks later tables and columns, which keep their
    /// defaults.
    private static func salvage(_ table: String, on conn: SQLiteConnection) throws(StoreError) -> TableResult {
        let name = SQLQuote.identifier(table)
        let oldColumns = Set(try conn.query("SELECT name FROM pragma_table_info(?, 'old')", [.text(table)]).map { row throws(StoreError) in
            try row.string(0)
        })
        guard !oldColumns.isEmpty else { return TableResult(table: table, rows: 0, damaged: nil) }
        var shared: [String] = []
        var keys: [String] = []
        for column in try conn.query("SELECT name, pk FROM pragma_table_info(?, 'main')", [.text(table)]) {
            let columnName = try column.string(0)
            guard oldColumns.contains(columnName) else { continue }
            shared.append(SQLQuote.identifier(columnName))
            if try column.int64(1) > 0 { keys.append(SQLQuote.identifier(columnName)) }
        }
        let list = shared.joined(separator: ", ")
        let order = keys.isEmpty ? "rowid" : keys.joined(separator: ", ")
        let descending = keys.isEmpty ? "rowid DESC" : keys.map { $0 + " DESC" }.joined(separator: ", ")
        let insert = try conn.prepare("INSERT OR IGNORE INTO main.\(name) (\(list)) VALUES (\(Array(repeating: "?", count: shared.count).joined(separator: ", ")))")
        let forward = try scan("SELECT \(list) FROM old.\(name) ORDER BY \(order)", columns: shared.count, into: insert, on: conn)
        guard let damage = forward.damage else { return TableResult(table: table, rows: forward.rows, damaged: nil) }
        let backward = try scan("SELECT \(list) FROM old.\(name) ORDER BY \(descending)", columns: shared.count, into: insert, on: conn)
        return TableResult(table: table, rows: forward.rows + backward.rows, damaged: damage)
    }

    /// Inserts the rows `select` yields until it ends or meets damage (returned by name).
    private static func scan(_ select: String, columns: Int, into insert: Statement,
                             on conn: SQLiteConnection) throws(StoreError) -> (rows: Int, damage: String?) {
        var rows = 0
        do {
            let statement = try conn.prepare(select)
            while try statement.step() {
                try insert.bind((0..<Int32(columns)).map(statement.value))
                _ = try insert.step()
                rows += conn.changes
            }
            return (rows, nil)
        } catch .corrupt(let code, _, _) {
            return (rows, SQLiteResultCode.name(code))
        }
    }
}
