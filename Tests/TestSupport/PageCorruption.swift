import Foundation
import SharedStore

/// Garbage written over one page of a database file, as a failing disk or a stray writer
/// leaves it: what the damage tests feed the daemon and the worker. The file's writers must
/// be stopped; the WAL is checkpointed first, so it holds no newer copy of the page.
///
/// ```swift
/// let page = try PageCorruption.rootPage(of: "message", databasePath: group.databasePath)
/// try PageCorruption.overwrite(page: page, databasePath: group.databasePath)
/// ```
public enum PageCorruption {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The root page of `table` (sqlite_schema).
    public static func rootPage(of table: String, databasePath: String) throws -> Int64 {
        let conn = try SQLiteConnection.open(path: databasePath, profile: .worker)
        guard let page = try conn.queryOne("SELECT rootpage FROM sqlite_schema WHERE name = ?", [.text(table)])?.int64(0) else {
            throw Failure(description: "no table \(table) in \(databasePath)")
        }
        return page
    }

    /// Writes garbage over page `page` (after a TRUNCATE checkpoint) and fsyncs it. Returns the page.
    @discardableResult
    public static func overwrite(page: Int64, databasePath: String) throws -> Int64 {
        let pageSize: Int64
        do {
            let conn = try SQLiteConnection.open(path: databasePath, profile: .worker)
            try conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            guard let size = try conn.queryOne("PRAGMA page_size")?.int64(0) else {
                throw Failure(description: "no page size in \(databasePath)")
            }
            pageSize = size
        }
        guard let handle = FileHandle(forUpdatingAtPath: databasePath) else {
            throw Failure(description: "cannot open \(databasePath)")
        }
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64((page - 1) * pageSize))
        try handle.write(contentsOf: Data((0..<Int(pageSize)).map { UInt8(truncatingIfNeeded: 0xA5 ^ $0) }))
        try handle.synchronize()
        return page
    }
}
