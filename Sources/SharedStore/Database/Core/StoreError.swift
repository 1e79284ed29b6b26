import GRDBSQLite
import Glibc

/// Why a database operation failed. Never carries message content, keys or secrets: only
/// SQLite's own message (which names tables and columns, not bound values), codes, and the
/// SQL text of the failing statement as it was prepared (with its `?` placeholders, never the
/// values bound to them). Damage, a full disk and any other SQLite failure keep SQLite's
/// extended result code, by name, so a log line says which check failed
/// (`SQLITE_CORRUPT_INDEX`, `SQLITE_IOERR_WRITE`, …) and in which statement.
///
/// ```swift
/// do { try conn.execute("BEGIN IMMEDIATE") }
/// catch .busy { /* retryable: another process held the write lock past the timeout */ }
/// catch .corrupt(let code, _, let statement) { print(SQLiteResultCode.name(code), statement ?? "") }
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
    /// Any other SQLite failure: its extended code, SQLite's message, and the statement.
    case sqlite(code: Int32, message: String, statement: String? = nil)
    /// The file is not an SQLite database, or it is damaged (SQLITE_CORRUPT, SQLITE_NOTADB
    /// and their extended codes).
    case corrupt(code: Int32, message: String, statement: String? = nil)
    /// SQLITE_FULL: the file system holding the database has no space left (or the file hit
    /// its maximum page count). Retryable once space is freed.
    case diskFull(code: Int32, message: String, statement: String? = nil)

    /// True for the errors a pusher should retry: the lock, or a schema from a daemon update.
    public var isRetryable: Bool {
        switch self {
        case .busy, .schemaTooNew: return true
        default: return false
        }
    }

    /// The SQL text of the statement that failed, when SQLite raised the error in one.
    public var statement: String? {
        switch self {
        case .sqlite(_, _, let statement), .corrupt(_, _, let statement), .diskFull(_, _, let statement): return statement
        default: return nil
        }
    }

    public var description: String {
        let context = statement.map { " in \"\($0)\"" } ?? ""
        switch self {
        case .busy: return "the database is locked by another process (busy timeout passed)"
        case .schemaTooNew(let found, let known): return "database schema \(found) is newer than this build's \(known)"
        case .schemaMissing: return "the database has no schema yet; start the daemon"
        case .io(let message): return "database I/O error: \(message)"
        case .sqlite(let code, let message, _): return "database error \(SQLiteResultCode.name(code)): \(message)\(context)"
        case .corrupt(let code, let message, _): return "the database is damaged (\(SQLiteResultCode.name(code)): \(message))\(context)"
        case .diskFull(let code, let message, _): return "disk full: no space left for the database (\(SQLiteResultCode.name(code)): \(message))\(context)"
        }
    }

    // MARK: Mapping SQLite result codes

    /// The longest statement text an error keeps (a migration's whole script is not a log line).
    static let statementLimit = 240

    /// Classifies a (possibly extended) SQLite result code raised on `handle`, running `statement`.
    /// Call it right after the failing SQLite call: an I/O error whose system call failed with
    /// ENOSPC or EDQUOT (an fsync on a full disk: SQLite says `SQLITE_IOERR_FSYNC`, and
    /// SQLITE_FULL only for a write) is a full disk too. SQLite keeps that errno in the
    /// failing file and the thread's errno, not in `sqlite3_system_errno` for a COMMIT.
    static func from(code: Int32, handle: OpaquePointer?, statement: String? = nil) -> StoreError {
        let systemError = errno
        let text = message(handle: handle, code: code)
        let error = classify(code: code, message: text, statement: statement)
        guard case .io = error, SQLiteResultCode.primary(code) == SQLiteResultCode.ioError,
              systemError == ENOSPC || systemError == EDQUOT else { return error }
        return .diskFull(code: code, message: text, statement: statement.map(Self.shortened))
    }

    /// The one mapping from SQLite result codes to ``StoreError``, for every connection of
    /// both processes. `statement` is SQL text as prepared, never with bound values.
    public static func classify(code: Int32, message: String, statement: String? = nil) -> StoreError {
        let statement = statement.map(Self.shortened)
        switch SQLiteResultCode.primary(code) {
        case SQLiteResultCode.busy, SQLiteResultCode.locked:
            return .busy
        case SQLiteResultCode.notADatabase, SQLiteResultCode.corrupt:
            return .corrupt(code: code, message: message, statement: statement)
        case SQLiteResultCode.full:
            return .diskFull(code: code, message: message, statement: statement)
        case SQLiteResultCode.ioError where code == SQLiteResultCode.ioErrorNoMemory:
            return .sqlite(code: code, message: message, statement: statement)
        case SQLiteResultCode.cantOpen, SQLiteResultCode.ioError, SQLiteResultCode.permission, SQLiteResultCode.readOnly:
            return .io("\(SQLiteResultCode.name(code)): \(message)" + (statement.map { " in \"\($0)\"" } ?? ""))
        default:
            return .sqlite(code: code, message: message, statement: statement)
        }
    }

    /// One line (runs of spaces and newlines become one space), at most ``statementLimit`` characters.
    private static func shortened(_ sql: String) -> String {
        var out = ""
        var count = 0
        var pendingSpace = false
        for character in sql {
            if character == " " || character == "\n" {
                pendingSpace = !out.isEmpty
                continue
            }
            if count + (pendingSpace ? 1 : 0) >= statementLimit { return out + "…" }
            if pendingSpace { out.append(" "); count += 1; pendingSpace = false }
            out.append(character)
            count += 1
        }
        return out
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
