import GRDBSQLite

/// Why a database operation failed. Never carries message content, keys or secrets: only
/// SQLite's own message (which names tables and columns, not bound values) and codes.
///
/// ```swift
/// do { try conn.execute("BEGIN IMMEDIATE") }
/// catch .busy { /* retryable: another process held the write lock past the timeout */ }
/// ```
public enum StoreError: Error, Equatable, Sendable {
    /// SQLITE_BUSY or SQLITE_LOCKED past the busy timeout. Retryable.
    case busy
    /// The file's `user_version` is newer than this build knows (a newer daemon migrated it).
    case schemaTooNew(found: Int64, known: Int64)
    /// The file has no schema yet (`user_version` 0): the daemon has not migrated it.
    case schemaMissing
    /// The file could not be opened or read (missing, permissions, disk).
    case io(String)
    /// Any other SQLite failure.
    case sqlite(code: Int32, message: String)
    /// The file is not an SQLite database, or it is damaged.
    case corrupt

    /// True for the errors a pusher should retry: the lock, or a schema from a daemon update.
    public var isRetryable: Bool {
        switch self {
        case .busy, .schemaTooNew: return true
        default: return false
        }
    }

    // MARK: Mapping SQLite result codes

    /// Classifies a (possibly extended) SQLite result code.
    static func from(code: Int32, handle: OpaquePointer?) -> StoreError {
        switch code & 0xff {
        case SQLITE_BUSY, SQLITE_LOCKED:
            return .busy
        case SQLITE_NOTADB, SQLITE_CORRUPT:
            return .corrupt
        case SQLITE_CANTOPEN, SQLITE_IOERR, SQLITE_PERM, SQLITE_READONLY, SQLITE_FULL:
            return .io(message(handle: handle, code: code))
        default:
            return .sqlite(code: code, message: message(handle: handle, code: code))
        }
    }

    private static func message(handle: OpaquePointer?, code: Int32) -> String {
        if let handle, let text = sqlite3_errmsg(handle) { return String(cString: text) }
        if let text = sqlite3_errstr(code) { return String(cString: text) }
        return "sqlite error \(code)"
    }
}

/// An error type that can carry a ``StoreError``, so ``SQLiteConnection/immediateTransaction(_:)``
/// can report a failed BEGIN or COMMIT in the caller's own error type.
///
/// ```swift
/// enum MyError: StoreErrorConvertible { case store(StoreError)
///     init(storeError: StoreError) { self = .store(storeError) } }
/// ```
public protocol StoreErrorConvertible: Error {
    init(storeError: StoreError)
}

extension StoreError: StoreErrorConvertible {
    public init(storeError: StoreError) { self = storeError }
}
