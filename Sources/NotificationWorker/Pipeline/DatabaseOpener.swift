import Glibc
import SharedStore

/// Opens the worker's database connection on a second thread, started at launch, so the
/// ~0.35 ms of opening, configuring and schema parsing overlaps with reading and decrypting
/// the push; `connection()` waits for it. The worker never migrates: an unknown schema comes
/// back as the error, retryable for the sender. A push rejected before it needs the database
/// simply exits with the thread unjoined (it only reads). ``closeIfWALIsDue(_:)`` closes
/// the connection after an ack when the WAL is large (docs/adr/0020); the next use reopens.
///
/// ```swift
/// let opener = DatabaseOpener(path: group.databasePath, profile: .worker(environment: env))
/// let conn = try opener.connection()
/// ```
final class DatabaseOpener: @unchecked Sendable {
    // @unchecked: `result` is written once by the opener thread before it ends and read only
    // after pthread_join, which orders the two.
    private let path: String
    private let profile: ConnectionProfile
    private var walPath: String { path + "-wal" }
    private var result: Result<SQLiteConnection, StoreError>?
    private var thread: pthread_t?

    init(path: String, profile: ConnectionProfile) {
        self.path = path
        self.profile = profile
        var handle = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let started = pthread_create(&handle, nil, { raw in
            let opener = Unmanaged<DatabaseOpener>.fromOpaque(raw!).takeRetainedValue()
            opener.result = opener.open()
            return nil
        }, context)
        if started == 0 {
            thread = handle
        } else {
            Unmanaged<DatabaseOpener>.fromOpaque(context).release()
            result = open()  // no thread to be had: open here
        }
    }

    func connection() throws(StoreError) -> SQLiteConnection {
        if let thread {
            pthread_join(thread, nil)
            self.thread = nil
        }
        if result == nil { result = open() }  // closed by closeIfWALIsDue (Accept=no): reopen
        switch result {
        case .success(let connection): return connection
        case .failure(let error): throw error
        case nil: throw StoreError.io("the database opener did not finish")
        }
    }

    /// After the ack: when `reset` says the WAL is due, drop the connection (it is reopened on
    /// next use) so that SQLite's close checkpoints and truncates the WAL if this process is
    /// the database's only user. Returns the WAL size before and after when it closed.
    func closeIfWALIsDue(_ reset: WALReset) -> (before: Int64, after: Int64)? {
        guard thread == nil, case .success = result else { return nil }
        let before = WALReset.fileSize(walPath)
        guard before > reset.aboveBytes else { return nil }
        result = nil  // the only reference: deinit finalizes the statements and closes
        return (before, WALReset.fileSize(walPath))
    }

    private func open() -> Result<SQLiteConnection, StoreError> {
        do {
            let connection = try SQLiteConnection.open(path: path, profile: profile)
            try SchemaCheck.verify(connection)
            return .success(connection)
        } catch {
            return .failure(error)
        }
    }
}
