import SharedStore

/// Every row of every table of a database file, each row as its columns' SQL literals
/// (`quote()`), sorted per table: equal dumps mean equal content, byte for byte. For
/// "a refused push wrote nothing" assertions.
///
/// ```swift
/// let before = try DatabaseDump.tables(path: group.databasePath)
/// // … a push that must be refused …
/// #expect(try DatabaseDump.tables(path: group.databasePath) == before)
/// ```
public enum DatabaseDump {
    public static func tables(path: String, except excluded: Set<String> = []) throws -> [String: [String]] {
        let conn = try SQLiteConnection.open(path: path, profile: .worker)
        var out: [String: [String]] = [:]
        for table in try conn.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") {
            let name = try table.string(0)
            guard !excluded.contains(name) else { continue }
            let columns = try conn.query("SELECT name FROM pragma_table_info(?)", [.text(name)]).map { try $0.string(0) }
            guard !columns.isEmpty else { continue }
            let select = columns.map { "quote(\"\($0)\")" }.joined(separator: " || '|' || ")
            out[name] = try conn.query("SELECT \(select) FROM \"\(name)\"").map { try $0.string(0) }.sorted()
        }
        return out
    }
}
