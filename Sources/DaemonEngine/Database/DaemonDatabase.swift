import DaemonLogging
import DaemonStore
import Foundation
import SharedStore
import SottoCrypto
import SottoWire

/// The daemon's handle on the shared database, on SharedStore's own connection like the
/// worker (docs/adr/0023): one writer connection, serialised by a lock, whose writes run
/// SharedStore's writers inside `BEGIN IMMEDIATE`, and read-only reader connections whose
/// reads each see one WAL snapshot. Every connection is configured by SharedStore's
/// ``ConnectionConfigurator`` (the worker's pragmas) and the file is migrated once at open.
/// Errors are SharedStore's ``StoreError``; damage met at run time is recorded in the damage
/// marker (docs/adr/0018).
///
/// ```swift
/// let db = try DaemonDatabase(directory: GroupDirectory(path: dir))
/// let seq = try db.write { conn in
///     try LocalStateWriter.markRead(conversationId: id, at: WallClock.nowMs(), on: conn)
/// }
/// let unread = try db.read { conn in try LocalStateRepository.state(of: id, on: conn)?.unreadCount }
/// ```
public final class DaemonDatabase: Sendable {
    public let profile: ConnectionProfile
    public let path: String
    public let directory: GroupDirectory
    private let writer: WriterConnection
    private let readers: ReaderPool
    /// Async writes wait here, not on a cooperative thread: a write may wait up to the busy
    /// timeout for a worker's commit.
    private let writeQueue = DispatchQueue(label: "sotto.database.write")
    /// Fired after every successful ``write(_:)``: the change feed's trigger for own writes.
    public let commits = CommitSignal()
    /// The keys every connection seals and opens content with (docs/adr/0052); nil only in
    /// tests of the SQL itself.
    public let contentKeys: ContentKeyring?
    /// Whether the open migrated a file that already had a schema (and so, from before v10,
    /// rewrote plaintext pages that a checkpoint must overwrite: docs/adr/0052).
    public let migratedExistingFile: Bool

    // MARK: Opening

    /// Opens (creating if needed) `shared.sqlite` in `directory`, switches it to WAL and
    /// migrates it, all on the writer connection: every step waits on the busy timeout
    /// (BEGIN IMMEDIATE), so two daemons (or a daemon and a worker) racing on a brand-new file
    /// both end fine. Throws ``StoreError`` (e.g. `.schemaTooNew`, `.corrupt`, `.busy`).
    /// `contentKeys` is set on every connection before anything runs, so the migration to
    /// v10 seals the rows it can (ContentSealingMigration).
    public init(directory: GroupDirectory, profile: ConnectionProfile = .daemon,
                contentKeys: ContentKeyring? = nil) throws {
        self.profile = profile
        self.path = directory.databasePath
        self.directory = directory
        self.contentKeys = contentKeys
        let connection = try SQLiteConnection.open(path: directory.databasePath, profile: profile, create: true)
        connection.contentKeys = contentKeys
        let found = try SchemaCheck.userVersion(connection)
        migratedExistingFile = try Migrator.migrate(connection) > 0 && found > 0
        writer = WriterConnection(connection)
        readers = ReaderPool(path: directory.databasePath, profile: profile, contentKeys: contentKeys)
    }

    /// The marker that tells workers (and the next start) the file is damaged.
    public var damageMarker: DamageMarker { DamageMarker(databasePath: path) }

    // MARK: Access

    /// Runs SharedStore writers in one `BEGIN IMMEDIATE` transaction on the writer connection,
    /// then fires ``commits`` (the change feed's trigger for own writes). A thrown error rolls
    /// everything back.
    public func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let value: T
        do {
            value = try writer.withConnection { conn in try conn.writeTransaction { try body(conn) } }
        } catch {
            throw recorded(error)
        }
        commits.fire()
        return value
    }

    /// Async form of ``write(_:)`` for callers on an actor: the write runs on a queue of its
    /// own, so waiting for a worker's lock never blocks a cooperative thread.
    public func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            writeQueue.async {
                continuation.resume(with: Result { try self.write(body) })
            }
        }
    }

    /// Runs SharedStore repositories on a reader connection, in one read transaction (a WAL
    /// snapshot: never waits for a writer).
    public func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        do {
            return try readers.read(body)
        } catch {
            throw recorded(error)
        }
    }

    /// Runs `body` on the writer connection outside any transaction: for WAL upkeep
    /// (`WALKeeper` is its only user; a checkpoint cannot run inside a transaction).
    func withWriterConnection<T>(_ body: (SQLiteConnection) throws -> T) rethrows -> T {
        try writer.withConnection(body)
    }

    // MARK: Errors

    /// Damage met at run time is recorded and logged once, so the workers stop acking pushes
    /// into this file (docs/adr/0018). A writer's own error type carrying a ``StoreError``
    /// (damage, a full disk, a busy timeout, an I/O error) surfaces as it, so callers and the
    /// control socket say what it is rather than the writer's type name.
    private func recorded(_ error: any Error) -> any Error {
        var error = error
        if let carried = (error as? any StoreErrorConvertible)?.underlyingStoreError { error = carried }
        if case StoreError.corrupt(let code, let message, let statement) = error, !damageMarker.isPresent {
            let cause = "\(SQLiteResultCode.name(code)) met at run time: \(message)" + (statement.map { " in \"\($0)\"" } ?? "")
            damageMarker.mark(cause)
            DaemonLog.error(DatabaseDamage.message(group: directory, cause: cause))
        }
        return error
    }
}
