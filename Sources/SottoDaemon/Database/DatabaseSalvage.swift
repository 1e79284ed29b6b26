import Foundation
import SharedStore

/// `sotto repair`'s work: move the damaged file aside (with its WAL), create a fresh, migrated
/// database, and copy every row SQLite can still read into it. Each table is read forward
/// until the first damaged page, then backward from its end until a damaged page, so one
/// garbage leaf page costs only the rows on it. AUTOINCREMENT counters keep their old high
/// points, so a change-feed seq is never reused. The damage marker is removed at the end.
///
/// ```swift
/// let report = try DatabaseSalvage.run(group: group)   // the daemon must be stopped
/// print(report.summary)
/// ```
public enum DatabaseSalvage {
    struct TableResult {
        let table: String
        let rows: Int
        let damaged: String?
    }

    public struct Report {
        let keptAt: String
        let tables: [TableResult]

        public var summary: String {
            var lines = tables.map { result in
                "\(result.table): \(result.rows) rows kept" + (result.damaged.map { "; damaged pages skipped (\($0))" } ?? "")
            }
            lines.append("the damaged file is kept at \(keptAt); start sotto again")
            return lines.joined(separator: "\n")
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    public static func run(group: GroupDirectory) throws -> Report {
        let path = group.databasePath
        guard FileManager.default.fileExists(atPath: path) else { throw Failure(description: "no database at \(path): nothing to repair") }
        let kept = group.path + "/damaged-\(WallClock.nowMs()).sqlite"
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            guard rename(path + suffix, kept + suffix) == 0 else {
                throw Failure(description: "cannot move \(path + suffix) aside: errno \(errno)")
            }
        }
        let fresh = try StoreConnection.open(path: path, profile: .worker, create: true)
        try Migrator.migrate(fresh)
        try fresh.execute("PRAGMA foreign_keys = OFF")
        let quoted = kept.replacingOccurrences(of: "'", with: "''")
        do {
            try fresh.execute("ATTACH DATABASE '\(quoted)' AS old")
        } catch {
            throw Failure(description: "the damaged file's header is unreadable (\(error)); restore \(path) from a backup (the damaged file is at \(kept))")
        }
        var results: [TableResult] = []
        let tables = try fresh.query("SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rootpage")
            .map { try $0.string(0) }
        for table in tables {
            results.append(try salvage(table, on: fresh))
        }
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
        DamageMarker(databasePath: path).clear()
        return Report(keptAt: kept, tables: results)
    }

    /// Copies `table`'s readable rows: forward to the first damaged page, then backward.
    private static func salvage(_ table: String, on conn: StoreConnection) throws -> TableResult {
        let name = "\"" + table.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        let columns = try conn.query("SELECT name, pk FROM pragma_table_info(?)", [.text(table)])
        let count = columns.count
        let keys = try columns.filter { try $0.int64(1) > 0 }.map { "\"\(try $0.string(0))\"" }
        let order = keys.isEmpty ? "rowid" : keys.joined(separator: ", ")
        let descending = keys.isEmpty ? "rowid DESC" : keys.map { $0 + " DESC" }.joined(separator: ", ")
        let insert = try conn.prepare("INSERT OR IGNORE INTO main.\(name) VALUES (\(Array(repeating: "?", count: count).joined(separator: ", ")))")
        let forward = try scan("SELECT * FROM old.\(name) ORDER BY \(order)", columns: count, into: insert, on: conn)
        guard let damage = forward.damage else { return TableResult(table: table, rows: forward.rows, damaged: nil) }
        let backward = try scan("SELECT * FROM old.\(name) ORDER BY \(descending)", columns: count, into: insert, on: conn)
        return TableResult(table: table, rows: forward.rows + backward.rows, damaged: damage)
    }

    /// Inserts the rows `select` yields until it ends or meets damage (returned by name).
    private static func scan(_ select: String, columns: Int, into insert: Statement,
                             on conn: StoreConnection) throws -> (rows: Int, damage: String?) {
        var rows = 0
        do {
            let statement = try conn.prepare(select)
            while try statement.step() {
                try insert.bind((0..<Int32(columns)).map(statement.value))
                _ = try insert.step()
                rows += conn.changes
            }
            return (rows, nil)
        } catch {
            guard let damage = Self.damageName(error) else { throw error }
            return (rows, damage)
        }
    }

    private static func damageName(_ error: StoreError) -> String? {
        if case .corrupt(let code, _) = error { return SQLiteResultCode.name(code) }
        return nil
    }
}
