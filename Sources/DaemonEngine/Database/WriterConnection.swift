import Foundation
import SharedStore

/// The daemon's one writer connection and the lock that serialises every use of it. SQLite
/// allows one writer at a time per file anyway (BEGIN IMMEDIATE); the lock keeps this
/// process's writes from interleaving on one handle opened `SQLITE_OPEN_NOMUTEX`.
///
/// `@unchecked Sendable` because the connection is a non-Sendable class: every access goes
/// through ``withConnection(_:)`` under `lock`, so one thread at a time uses it.
///
/// ```swift
/// let writer = WriterConnection(try SQLiteConnection.open(path: path, profile: .daemon, create: true))
/// try writer.withConnection { conn in try conn.writeTransaction { … } }
/// ```
final class WriterConnection: @unchecked Sendable {
    private let lock = NSLock()
    private let connection: SQLiteConnection

    init(_ connection: SQLiteConnection) {
        self.connection = connection
    }

    /// Runs `body` with the connection, holding the lock for its whole run.
    func withConnection<T>(_ body: (SQLiteConnection) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(connection)
    }
}
