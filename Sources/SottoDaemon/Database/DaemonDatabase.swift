import Foundation
import GRDB
import SharedStore

/// SharedStore's connection wrapper. GRDB also declares `SQLiteConnection` (a typealias of
/// `OpaquePointer`), so in MainProcess the bare name is ambiguous; use this one.
///
/// ```swift
/// try db.write { (conn: StoreConnection) in try InboxDeletion.delete(inboxId: id, on: conn) }
/// ```
public typealias StoreConnection = SharedStore.SQLiteConnection

/// The daemon's handle on the shared database: a GRDB `DatabasePool` whose every connection
/// is configured by SharedStore's ``ConnectionConfigurator`` (the same pragmas as the worker),
/// migrated once at open, and whose writes run SharedStore's writers on the GRDB writer
/// connection inside GRDB's IMMEDIATE transaction. There is no second copy of any write logic.
///
/// ```swift
/// let db = try DaemonDatabase(directory: GroupDirectory(path: dir))
/// let seq = try db.write { conn in
///     try LocalStateWriter.markRead(conversationId: id, at: WallClock.nowMs(), on: conn)
/// }
/// for try await state in db.observe({ conn in try LocalStateRepository.state(of: id, on: conn) }) { … }
/// ```
public final class DaemonDatabase: Sendable {
    public let pool: DatabasePool
    public let profile: ConnectionProfile
    public let path: String
    public let directory: GroupDirectory
    /// Fired after every successful ``write(_:)``: the change feed's trigger for own writes.
    public let commits = CommitSignal()

    // MARK: Opening

    /// Opens (creating if needed) `shared.sqlite` in `directory` and migrates it.
    /// Throws ``StoreError`` (e.g. `.schemaTooNew`, `.corrupt`, `.busy`).
    public init(directory: GroupDirectory, profile: ConnectionProfile = .daemon) throws {
        self.profile = profile
        self.path = directory.databasePath
        self.directory = directory
        var config = Configuration()
        let timeout = TimeInterval(profile.busyTimeoutMs) / 1000
        config.busyMode = .timeout(timeout)
        // Pool readers get the same timeout: prepareDatabase runs after GRDB's own busy set-up.
        config.prepareDatabase { db in
            try ConnectionConfigurator.configure(db.sqliteConnection!, profile: profile)
        }
        do {
            // Create, switch to WAL and migrate through one raw connection first: every step
            // then waits on the busy timeout (BEGIN IMMEDIATE), so two daemons (or a daemon and
            // a worker) racing on a brand-new file both end fine, and GRDB's own WAL set-up
            // finds nothing left to change.
            do {
                let first = try StoreConnection.open(path: directory.databasePath, profile: profile, create: true)
                try Migrator.migrate(first)
            }
            pool = try DatabasePool(path: directory.databasePath, configuration: config)
            // GRDB's WAL set-up runs after prepareDatabase on the writer and sets
            // synchronous=NORMAL; configure the writer again so it is FULL like the worker.
            try pool.writeWithoutTransaction { db in
                try ConnectionConfigurator.configure(db.sqliteConnection!, profile: profile)
            }
            // Again through GRDB, in its IMMEDIATE write: a no-op unless another version of the
            // daemon changed the schema in between.
            _ = try pool.write { db in
                try Migrator.migrate(StoreConnection(borrowing: db.sqliteConnection!))
            }
        } catch {
            throw Self.storeError(error)
        }
    }

    /// The marker that tells workers (and the next start) the file is damaged.
    public var damageMarker: DamageMarker { DamageMarker(databasePath: path) }

    /// ``storeError(_:)``, and damage met at run time is recorded and logged once, so the
    /// workers stop acking pushes into this file (docs/adr/0018).
    private func mapped(_ error: any Error) -> any Error {
        var error = Self.storeError(error)
        // A writer's own error type carrying damage or a full disk: surface the StoreError,
        // so callers and the control socket say what it is.
        if let carried = (error as? any StoreErrorConvertible)?.underlyingStoreError {
            switch carried {
            case .corrupt, .diskFull: error = carried
            default: break
            }
        }
        if case StoreError.corrupt(let code, let message) = error, !damageMarker.isPresent {
            let cause = "\(SQLiteResultCode.name(code)) met at run time: \(message)"
            damageMarker.mark(cause)
            DaemonLog.error(DatabaseDamage.message(group: directory, cause: cause))
        }
        return error
    }

    // MARK: Access

    /// Runs SharedStore writers in one GRDB write transaction, then tells this pool's
    /// ValueObservations to re-fetch (they cannot see statements run through the C API).
    /// A thrown error rolls everything back; GRDB errors surface as ``StoreError``.
    public func write<T>(_ body: (StoreConnection) throws -> T) throws -> T {
        let value: T
        do {
            value = try pool.write { db in
                let value = try body(StoreConnection(borrowing: db.sqliteConnection!))
                try db.notifyChanges(in: .fullDatabase)
                return value
            }
        } catch {
            throw mapped(error)
        }
        commits.fire()
        return value
    }

    /// Async form of ``write(_:)`` for callers on an actor.
    public func write<T: Sendable>(_ body: @escaping @Sendable (StoreConnection) throws -> T) async throws -> T {
        let value: T
        do {
            value = try await pool.write { db in
                let value = try body(StoreConnection(borrowing: db.sqliteConnection!))
                try db.notifyChanges(in: .fullDatabase)
                return value
            }
        } catch {
            throw mapped(error)
        }
        commits.fire()
        return value
    }

    /// Runs SharedStore repositories on a pool reader (a WAL snapshot).
    public func read<T>(_ body: (StoreConnection) throws -> T) throws -> T {
        do {
            return try pool.read { db in try body(StoreConnection(borrowing: db.sqliteConnection!)) }
        } catch {
            throw mapped(error)
        }
    }

    /// Makes observations re-fetch after another process (the worker) committed: call it when
    /// the change_log moved or a push was acked. Observations do not see other processes' writes.
    /// A write access without a transaction: no lock is taken, so workers are never held up.
    public func notifyExternalChanges() throws {
        try pool.writeWithoutTransaction { db in try db.notifyChanges(in: .fullDatabase) }
    }

    // MARK: Observation

    /// The values of `fetch` now and after every write, duplicates removed (the initial value
    /// may otherwise come twice). Tracks the full database, because fetches through the C API
    /// are invisible to GRDB's region tracking.
    public func observe<T: Sendable & Equatable>(
        _ fetch: @escaping @Sendable (StoreConnection) throws -> T
    ) -> AsyncValueObservation<T> {
        ValueObservation
            .tracking(region: DatabaseRegion.fullDatabase) { db in
                try fetch(StoreConnection(borrowing: db.sqliteConnection!))
            }
            .removeDuplicates()
            .values(in: pool)
    }

    /// The newest change_log seq, observed (a cheap trigger for consumers that catch up).
    public func observeLatestChange() -> AsyncValueObservation<Int64> {
        observe { conn in try ChangeLogRepository.latestSeq(on: conn) }
    }

    // MARK: Errors

    /// GRDB's `DatabaseError` as a ``StoreError`` (extended code kept); every other error
    /// unchanged.
    static func storeError(_ error: any Error) -> any Error {
        guard let dbError = error as? DatabaseError else { return error }
        return StoreError.classify(code: dbError.extendedResultCode.rawValue, message: dbError.message ?? "")
    }
}
