/// Names of SQLite's (extended) result codes, for messages a user or a log reader can act
/// on: `SQLITE_CORRUPT_INDEX` says more than "code 779". Codes SQLite may add later fall
/// back to the primary code's name with the number.
///
/// ```swift
/// SQLiteResultCode.name(779)     // "SQLITE_CORRUPT_INDEX"
/// SQLiteResultCode.name(13)      // "SQLITE_FULL"
/// ```
public enum SQLiteResultCode {
    static let ioerrNomem: Int32 = 10 | (12 << 8)

    public static func name(_ code: Int32) -> String {
        if let name = extended[code] { return name }
        if let name = primary[code & 0xff] { return code > 0xff ? "\(name) (extended \(code))" : name }
        return "SQLite code \(code)"
    }

    private static let primary: [Int32: String] = [
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
