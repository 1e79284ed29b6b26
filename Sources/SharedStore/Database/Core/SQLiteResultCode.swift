/// Names of SQLite's (extended) result codes, for messages a user or a log reader can act
/// on: `SQLITE_CORRUPT_INDEX` says more than "code 779". Codes SQLite may add later fall
/// back to the primary code's name with the number.
///
/// ```swift
/// SQLiteResultCode.name(779)     // "SQLITE_CORRUPT_INDEX"
/// SQLiteResultCode.name(13)      // "SQLITE_FULL"
/// SQLiteResultCode.primary(779) == SQLiteResultCode.corrupt   // true
/// ```
public enum SQLiteResultCode {
    // MARK: Named codes (the ones this package tests for or raises itself)

    public static let error: Int32 = 1
    public static let busy: Int32 = 5
    public static let locked: Int32 = 6
    public static let permission: Int32 = 3
    public static let readOnly: Int32 = 8
    public static let interrupt: Int32 = 9
    public static let ioError: Int32 = 10
    public static let corrupt: Int32 = 11
    public static let full: Int32 = 13
    public static let cantOpen: Int32 = 14
    public static let constraint: Int32 = 19
    public static let mismatch: Int32 = 20
    public static let misuse: Int32 = 21
    public static let range: Int32 = 25
    public static let notADatabase: Int32 = 26
    /// SQLITE_IOERR_NOMEM: out of memory, reported as an I/O error.
    public static let ioErrorNoMemory: Int32 = ioError | (12 << 8)

    /// The primary code of a (possibly extended) code: `SQLITE_CORRUPT_INDEX` → `SQLITE_CORRUPT`.
    public static func primary(_ code: Int32) -> Int32 { code & 0xff }

    // MARK: Names

    public static func name(_ code: Int32) -> String {
        if let name = extended[code] { return name }
        if let name = primaryNames[primary(code)] { return code > 0xff ? "\(name) (extended \(code))" : name }
        return "SQLite code \(code)"
    }

    private static let primaryNames: [Int32: String] = [
        1: "SQLITE_ERROR", 2: "SQLITE_INTERNAL", 3: "SQLITE_PERM", 4: "SQLITE_ABORT", 5: "SQLITE_BUSY",
        6: "SQLITE_LOCKED", 7: "SQLITE_NOMEM", 8: "SQLITE_READONLY", 9: "SQLITE_INTERRUPT", 10: "SQLITE_IOERR",
        11: "SQLITE_CORRUPT", 12: "SQLITE_NOTFOUND", 13: "SQLITE_FULL", 14: "SQLITE_CANTOPEN",
        15: "SQLITE_PROTOCOL", 17: "SQLITE_SCHEMA", 18: "SQLITE_TOOBIG", 19: "SQLITE_CONSTRAINT",
        20: "SQLITE_MISMATCH", 21: "SQLITE_MISUSE", 22: "SQLITE_NOLFS", 23: "SQLITE_AUTH", 25: "SQLITE_RANGE",
        26: "SQLITE_NOTADB",
    ]

    private static let extended: [Int32: String] = {
        var table: [Int32: String] = [:]
        let ioerr = ["READ", "SHORT_READ", "WRITE", "FSYNC", "DIR_FSYNC", "TRUNCATE", "FSTAT", "UNLOCK", "RDLOCK",
                     "DELETE", "BLOCKED", "NOMEM", "ACCESS", "CHECKRESERVEDLOCK", "LOCK", "CLOSE", "DIR_CLOSE",
                     "SHMOPEN", "SHMSIZE", "SHMLOCK", "SHMMAP", "SEEK", "DELETE_NOENT", "MMAP", "GETTEMPPATH",
                     "CONVPATH", "VNODE", "AUTH", "BEGIN_ATOMIC", "COMMIT_ATOMIC", "ROLLBACK_ATOMIC", "DATA",
                     "CORRUPTFS"]
        for (offset, suffix) in ioerr.enumerated() { table[10 | Int32(offset + 1) << 8] = "SQLITE_IOERR_" + suffix }
        let families: [(Int32, String, [String])] = [
            (11, "SQLITE_CORRUPT_", ["VTAB", "SEQUENCE", "INDEX"]),
            (5, "SQLITE_BUSY_", ["RECOVERY", "SNAPSHOT", "TIMEOUT"]),
            (19, "SQLITE_CONSTRAINT_", ["CHECK", "COMMITHOOK", "FOREIGNKEY", "FUNCTION", "NOTNULL", "PRIMARYKEY",
                                        "TRIGGER", "UNIQUE", "VTAB", "ROWID", "PINNED", "DATATYPE"]),
            (6, "SQLITE_LOCKED_", ["SHAREDCACHE", "VTAB"]),
            (14, "SQLITE_CANTOPEN_", ["NOTEMPDIR", "ISDIR", "FULLPATH", "CONVPATH", "DIRTYWAL", "SYMLINK"]),
            (8, "SQLITE_READONLY_", ["RECOVERY", "CANTLOCK", "ROLLBACK", "DBMOVED", "CANTINIT", "DIRECTORY"]),
        ]
        for (base, prefix, suffixes) in families {
            for (offset, suffix) in suffixes.enumerated() { table[base | Int32(offset + 1) << 8] = prefix + suffix }
        }
        return table
    }()
}
