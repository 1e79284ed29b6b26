import SharedStore

/// Naming what the start-up quick check found damaged (docs/adr/0018): the daemon's part of
/// ``IntegrityCheck``; the worker never needs it.
///
/// ```swift
/// let name = IntegrityCheck.object(rootPage: 7, on: conn)   // "table message"
/// let hit = IntegrityCheck.damagedTables(on: conn)           // ["message"]
/// ```
extension IntegrityCheck {
    /// The schema object whose b-tree starts at `rootPage` ("table message", "index …"), to
    /// name what quick_check's "Tree N" is.
    public static func object(rootPage: Int64, on conn: SQLiteConnection) -> String? {
        guard let row = try? conn.queryOne("SELECT type, name FROM sqlite_schema WHERE rootpage = ?", [.integer(rootPage)]),
              let type = try? row.string(0), let name = try? row.string(1) else { return nil }
        return "\(type) \(name)"
    }

    /// When quick_check stops with an error instead of naming a b-tree, each table (with its
    /// indexes) is checked on its own to say which ones are hit. Meant for a damaged file only.
    public static func damagedTables(on conn: SQLiteConnection) -> [String] {
        guard let tables = try? conn.query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        else { return [] }
        return tables.compactMap { row -> String? in
            guard let name = try? row.string(0) else { return nil }
            do throws(StoreError) {
                let check = try conn.prepare("PRAGMA quick_check(\(SQLQuote.identifier(name)))")
                var lines: [String] = []
                while try check.step() { lines.append(check.string(0)) }
                return lines == ["ok"] ? nil : name
            } catch {
                return name
            }
        }
    }
}
