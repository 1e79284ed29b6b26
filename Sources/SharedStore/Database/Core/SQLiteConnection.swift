import GRDBSQLite

/// One SQLite connection over the C API, used by one thread at a time. Both processes open
/// their own (``open(path:profile:create:readOnly:)``, which owns and closes the handle) and
/// run the very same repositories and writers on it; ``init(borrowing:)`` wraps a handle
/// someone else owns (never closed here).
///
/// ```swift
/// let conn = try SQLiteConnection.open(path: dir.databasePath, profile: .worker)
/// try SchemaCheck.verify(conn)
/// let outcome = try conn.immediateTransaction { () throws(IncomingWriteError) in
///     try IncomingMessageWriter.write(message, recipientInboxId: inbox, topic: topic,
///                                     now: WallClock.nowMs(), on: conn)
/// }
/// ```
public final class SQLiteConnection {
    /// The raw `sqlite3*`.
    public let handle: OpaquePointer
    private let ownsHandle: Bool
    /// Prepared statements by SQL text, reused by `query`, `queryOne` and `run`: a worker
    /// serving many pushes (Accept=no) compiles each writer statement once.
    private var statements: [String: Statement] = [:]
    /// The keys content cells are sealed and opened with (docs/adr/0052); nil passes them
    /// through (see `sealedCell`). The daemon and the worker always set it.
    public var contentKeys: ContentKeyring?

    // MARK: Opening

    /// Opens (and with `create`, creates) the database at `path` and configures it through
    /// ``ConnectionConfigurator``. Without `create` a missing file is `.io`, so a worker never
    /// leaves an empty database behind. `readOnly` opens a reader that can never write (the
    /// daemon's reader connections; the file must exist and already be in WAL mode).
    public static func open(path: String, profile: ConnectionProfile,
                            create: Bool = false, readOnly: Bool = false) throws(StoreError) -> SQLiteConnection {
        var handle: OpaquePointer?
        var flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let error = StoreError.from(code: code, handle: handle)
            if let handle { sqlite3_close_v2(handle) }
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
        let connection = SQLiteConnection(owning: handle)
        try ConnectionConfigurator.configure(handle, profile: profile)
        return connection
    }

    private init(owning handle: OpaquePointer) {
        self.handle = handle
        self.ownsHandle = true
    }

    /// Wraps a handle someone else owns (a pragma report, a checkpoint on it). The
    /// wrapper must not outlive that access; it never closes the handle.
    public init(borrowing handle: OpaquePointer) {
        self.handle = handle
        self.ownsHandle = false
    }

    deinit {
        statements.removeAll()  // finalize before closing
        if ownsHandle { sqlite3_close_v2(handle) }
    }

    // MARK: Running SQL

    /// Runs one or more statements without arguments (schema, pragmas, BEGIN/COMMIT).
    public func execute(_ sql: String) throws(StoreError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw StoreError.from(code: code, handle: handle, statement: sql) }
    }

    /// Prepares one statement.
    public func prepare(_ sql: String) throws(StoreError) -> Statement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw StoreError.from(code: code == SQLITE_OK ? SQLITE_MISUSE : code, handle: handle, statement: sql)
        }
        return Statement(handle: statement, connection: handle)
    }

    /// Runs one statement with arguments and returns every row.
    @discardableResult
    public func query(_ sql: String, _ binds: [SQLiteValue] = []) throws(StoreError) -> [Row] {
        let statement = try cached(sql)
        defer { statement.clear() }
        try statement.bind(binds)
        var rows: [Row] = []
        while try statement.step() {
            rows.append(statement.row())
        }
        return rows
    }

    /// Runs one statement with arguments and returns its first row, if any.
    public func queryOne(_ sql: String, _ binds: [SQLiteValue] = []) throws(StoreError) -> Row? {
        let statement = try cached(sql)
        defer { statement.clear() }  // a statement left mid-rows would keep its read open
        try statement.bind(binds)
        return try statement.step() ? statement.row() : nil
    }

    /// Runs one statement with arguments, ignoring rows; returns ``changes``.
    @discardableResult
    public func run(_ sql: String, _ binds: [SQLiteValue] = []) throws(StoreError) -> Int {
        let statement = try cached(sql)
        defer { statement.clear() }
        try statement.bind(binds)
        while try statement.step() {}
        return changes
    }

    private func cached(_ sql: String) throws(StoreError) -> Statement {
        if let statement = statements[sql] { return statement }
        let statement = try prepare(sql)
        statements[sql] = statement
        return statement
    }

    /// The rowid of the last successful INSERT on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the last INSERT/UPDATE/DELETE on this connection.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// True while a transaction is open on this connection (SQLite's autocommit is off).
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    // MARK: Transactions

    /// Runs `body` in `BEGIN IMMEDIATE … COMMIT`, rolling back if it throws (or if COMMIT
    /// fails). BEGIN IMMEDIATE takes the write lock up front, so the busy timeout covers the
    /// whole wait and no deadlock can arise between two writers. Inside a transaction that is
    /// already open (the daemon's write), it runs in a SAVEPOINT of that transaction instead.
    public func immediateTransaction<T, E: StoreErrorConvertible>(
        _ body: () throws(E) -> T
    ) throws(E) -> T {
        let nested = isInTransaction
        do { try execute(nested ? "SAVEPOINT sotto_nested" : "BEGIN IMMEDIATE") } catch { throw E(storeError: error) }
        let value: T
        do {
            value = try body()
        } catch {
            if nested {
                _ = sqlite3_exec(handle, "ROLLBACK TO sotto_nested; RELEASE sotto_nested", nil, nil, nil)
            } else {
                rollback()
            }
            throw error
        }
        do {
            try execute(nested ? "RELEASE sotto_nested" : "COMMIT")
        } catch {
            if nested {
                _ = sqlite3_exec(handle, "ROLLBACK TO sotto_nested; RELEASE sotto_nested", nil, nil, nil)
            } else {
                rollback()
            }
            throw E(storeError: error)
        }
        return value
    }

    private func rollback() {
        if isInTransaction { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
    }
}
