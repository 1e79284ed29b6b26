import GRDBSQLite

/// A prepared statement of one ``SQLiteConnection``. Finalized when released.
///
/// ```swift
/// let stmt = try conn.prepare("INSERT INTO change_log(kind, writerPid, createdAt) VALUES (?, ?, ?)")
/// try stmt.bind([.text("inboxCreated"), .integer(1), .integer(0)])
/// _ = try stmt.step()   // false: no row, done
/// ```
public final class Statement {
    let handle: OpaquePointer
    private let connection: OpaquePointer

    init(handle: OpaquePointer, connection: OpaquePointer) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// The statement's SQL text as prepared: `?` placeholders, never the bound values
    /// (`sqlite3_sql`, not `sqlite3_expanded_sql`), so an error may carry it into a log line.
    public var sql: String {
        sqlite3_sql(handle).map { String(cString: $0) } ?? ""
    }

    // MARK: Binding

    /// Clears previous bindings and binds `values` to parameters 1...n.
    public func bind(_ values: [SQLiteValue]) throws(StoreError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        guard Int(sqlite3_bind_parameter_count(handle)) == values.count else {
            throw .sqlite(code: SQLITE_RANGE, message: "expected \(sqlite3_bind_parameter_count(handle)) arguments, got \(values.count)",
                          statement: sql)
        }
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds one value to the 1-based parameter `index`.
    public func bind(_ value: SQLiteValue, at index: Int32) throws(StoreError) {
        let code: Int32
        switch value {
        case .integer(let v):
            code = sqlite3_bind_int64(handle, index, v)
        case .text(let v):
            code = sqlite3_bind_text(handle, index, v, -1, sqliteTransient)
        case .blob(let v):
            code = v.withUnsafeBytes { buffer in
                // A zero-length blob still binds as a blob, not NULL.
                sqlite3_bind_blob(handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                                  Int32(buffer.count), sqliteTransient)
            }
        case .null:
            code = sqlite3_bind_null(handle, index)
        }
        guard code == SQLITE_OK else { throw StoreError.from(code: code, handle: connection, statement: sql) }
    }

    // MARK: Stepping

    /// Advances one row: `true` when a row is available, `false` when done.
    public func step() throws(StoreError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = StoreError.from(code: code, handle: connection, statement: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Resets the statement so it can run again (bindings kept).
    public func reset() {
        sqlite3_reset(handle)
    }

    /// Resets the statement and drops its bindings (no bound bytes are kept alive).
    public func clear() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Reading columns of the current row

    public var columnCount: Int32 { sqlite3_column_count(handle) }

    public func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    public func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    public func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    public func blob(_ column: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// The current row's column as a ``SQLiteValue`` of its storage class (REAL reads as integer).
    public func value(_ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_NULL: return .null
        case SQLITE_INTEGER, SQLITE_FLOAT: return .integer(int64(column))
        case SQLITE_BLOB: return .blob(blob(column))
        default: return .text(string(column))
        }
    }

    /// The current row as a ``Row``.
    public func row() -> Row {
        Row(values: (0..<columnCount).map(value))
    }
}

/// SQLite's `SQLITE_TRANSIENT` (a macro, not importable): SQLite copies the bound bytes.
let sqliteTransient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
