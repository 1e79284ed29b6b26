import Foundation
import DaemonStore
import SharedStore

/// Read-only connections for the daemon's reads, each used by one thread at a time: a read
/// takes an idle one (or opens one), runs in one read transaction (a WAL snapshot, so it never
/// waits for a writer), and gives it back. At most `maxIdle` stay open between reads; a burst
/// of concurrent reads opens more and closes the extras.
///
/// `@unchecked Sendable`: the idle list is only touched under `lock`, and a connection taken
/// from it belongs to the one read that took it until it is given back.
///
/// ```swift
/// let readers = ReaderPool(path: group.databasePath, profile: .daemon)
/// let count = try readers.read { conn in try ConversationCountRepository.count(on: conn) }
/// ```
final class ReaderPool: @unchecked Sendable {
    let path: String
    let profile: ConnectionProfile
    let maxIdle: Int
    private let lock = NSLock()
    private var idle: [SQLiteConnection] = []

    let contentKeys: ContentKeyring?

    init(path: String, profile: ConnectionProfile, contentKeys: ContentKeyring? = nil, maxIdle: Int = 4) {
        self.path = path
        self.profile = profile
        self.contentKeys = contentKeys
        self.maxIdle = maxIdle
    }

    /// Runs `body` on a reader inside one read transaction.
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let conn = try take()
        defer { giveBack(conn) }
        return try conn.readTransaction { try body(conn) }
    }

    /// Readers open now (idle ones; tests and `sotto status` use it).
    var idleCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return idle.count
    }

    private func take() throws -> SQLiteConnection {
        lock.lock()
        let conn = idle.popLast()
        lock.unlock()
        if let conn { return conn }
        let opened = try SQLiteConnection.open(path: path, profile: profile, readOnly: true)
        opened.contentKeys = contentKeys
        return opened
    }

    private func giveBack(_ conn: SQLiteConnection) {
        lock.lock()
        defer { lock.unlock() }
        if idle.count < maxIdle { idle.append(conn) }
    }
}
