import GRDBSQLite

/// Why a database operation failed. Never carries message content, keys or secrets: only
/// SQLite's own message (which names tables and columns, not bound values) and codes.
/// Damage and a full disk keep SQLite's extended result code, by name, so a log line says
/// which check failed (`SQLITE_CORRUPT_INDEX`, `SQLITE_IOERR_WRITE`, …).
///
/// ```swift
/// do { try conn.execute("BEGIN IMMEDIATE") }
/// catch .busy { /* retryable: another process held the write lock past the timeout */ }
/// catch .corrupt(let code, _) { print(SQLiteResultCode.name(code)) }   // "SQLITE_CORRUPT"
/// ```
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// SQLITE_BUSY or SQLITE_LOCKED past the busy timeout. Retryable.
    case busy
    /// The file's `user_version` is newer than this build knows (a newer daemon migrated it).
    case schemaTooNew(found: Int64, known: Int64)
    /// The file has no schema yet (`user_version` 0): the daemon has not migrated it.
    case schemaMissing
    /// The file could not be opened or read (missing, permissions, I/O error).
    case io(String)
    /// Any other SQLite failure.
    case sqlite(code: Int32, message: String)
    /// The file is not an SQLite database, or it is damaged (SQLITE_CORRUPT, SQLITE_NOTADB
    /// and their extended codes).
    case corrupt(code: Int32, message: String)
    /// SQLITE_FULL: the file system holding the database has no space left (or the file hit
    /// its maximum page count). Retryable once space is freed.
    case diskFull(code: Int32, message: String)

    /// True for the errors a pusher should retry: the lock, or a schema from a daemon update.
    public var isRetryable: Bool {
        switch self {
        case .busy, .schemaTooNew: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .busy: return "the database is locked by another process (busy timeout passed)"
        case .schemaTooNew(let found, let known): return "database schema \(found) is newer than this build's \(known)"
        case .schemaMissing: return "the database has no schema yet; start the daemon"
        case .io(let message): return "database I/O error: \(message)"
        case .sqlite(let code, let message): return "database error \(SQLiteResultCode.name(code)): \(message)"
        case .corrupt(let code, let message): return "the database is damaged (\(SQLiteResultCode.name(code)): \(message))"
        case .diskFull(let code, let message): return "disk full: no space left for the database (\(SQLiteResultCode.name(code)): \(message))"
        }
    }

    // MARK: Mapping SQLite result codes

    /// Classifies a (possibly extended) SQLite result code.
    static func from(code: Int32, handle: OpaquePointer?) -> StoreError {
        classify(code: code, message: message(handle: handle, code: code))
    }

    /// Classifies a (possibly extended) SQLite result code with its message; for callers
    /// that got both elsewhere (GRDB's `DatabaseError`).
    public static func classify(code: Int32, message: String) -> StoreError {
        switch code & 0xff {
        case SQLITE_BUSY, SQLITE_LOCKED:
            return .busy
        case SQLITE_NOTADB, SQLITE_CORRUPT:
            return .corrupt(code: code, message: message)
        case SQLITE_FULL:
            return .diskFull(code: code, message: message)
        case SQLITE_IOERR where code == SQLiteResultCode.ioerrNomem:
            return .sqlite(code: code, message: message)
        case SQLITE_CANTOPEN, SQLITE_IOERR, SQLITE_PERM, SQLITE_READONLY:
            return .io("\(SQLiteResultCode.name(code)): \(message)")
        default:
            return .sqlite(code: code, message: message)
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
    /// The ``StoreError`` this error carries, if it is one (so damage and a full disk are
    /// recognised whichever writer met them).
    var underlyingStoreError: StoreError? { get }
}

extension StoreErrorConvertible {
    public var underlyingStoreError: StoreError? { nil }
}

extension StoreError: StoreErrorConvertible {
    public init(storeError: StoreError) { self = storeError }
    public var underlyingStoreError: StoreError? { self }
}
