/// One fetched row: its values by column index, with typed reads that fail cleanly
/// (`StoreError.sqlite(code: SQLITE_MISMATCH, …)`) instead of trapping on a wrong type.
///
/// ```swift
/// for row in try conn.query("SELECT inboxId, lastActivityAt FROM inbox") {
///     let id = try row.string(0)
///     let last = try row.optionalInt64(1)
/// }
/// ```
public struct Row: Sendable, Equatable {
    public let values: [SQLiteValue]

    public init(values: [SQLiteValue]) {
        self.values = values
    }

    public var count: Int { values.count }

    // MARK: Typed reads

    public func int64(_ index: Int) throws(StoreError) -> Int64 {
        guard case .integer(let v) = try value(index) else { throw mismatch(index, "integer") }
        return v
    }

    public func optionalInt64(_ index: Int) throws(StoreError) -> Int64? {
        switch try value(index) {
        case .null: return nil
        case .integer(let v): return v
        default: throw mismatch(index, "integer or null")
        }
    }

    public func bool(_ index: Int) throws(StoreError) -> Bool {
        try int64(index) != 0
    }

    public func string(_ index: Int) throws(StoreError) -> String {
        guard case .text(let v) = try value(index) else { throw mismatch(index, "text") }
        return v
    }

    public func optionalString(_ index: Int) throws(StoreError) -> String? {
        switch try value(index) {
        case .null: return nil
        case .text(let v): return v
        default: throw mismatch(index, "text or null")
        }
    }

    /// A blob column; an empty blob may be stored as NULL by SQLite, so NULL reads as `[]`.
    public func blob(_ index: Int) throws(StoreError) -> [UInt8] {
        switch try value(index) {
        case .null: return []
        case .blob(let v): return v
        default: throw mismatch(index, "blob")
        }
    }

    // MARK: Helpers

    private func value(_ index: Int) throws(StoreError) -> SQLiteValue {
        guard values.indices.contains(index) else {
            throw .sqlite(code: SQLiteResultCode.range, message: "column \(index) out of range")
        }
        return values[index]
    }

    private func mismatch(_ index: Int, _ expected: String) -> StoreError {
        .sqlite(code: SQLiteResultCode.mismatch, message: "column \(index) is not \(expected)")
    }
}
