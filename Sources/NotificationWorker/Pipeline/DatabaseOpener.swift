import Glibc
import SharedStore

/// Opens the worker's database connection on a second thread, started at launch, so the
/// ~0.35 ms of opening, configuring and schema parsing overlaps with reading and decrypting
/// the push; `connection()` waits for it. The worker never migrates: an unknown schema comes
/// back as the error, retryable for the sender. A push rejected before it needs the database
/// simply exits with the thread unjoined (it only reads).
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
        switch result {
        case .success(let connection): return connection
        case .failure(let error): throw error
        case nil: throw StoreError.io("the database opener did not finish")
        }
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
