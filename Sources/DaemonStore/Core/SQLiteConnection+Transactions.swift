import SharedStore

/// The daemon's transactions on SharedStore's connection: write bodies that mix several
/// writers' error types, and reads that must see one snapshot.
///
/// ```swift
/// let seq = try conn.writeTransaction { try LocalStateWriter.markRead(conversationId: id, at: now, on: conn) }
/// let count = try conn.readTransaction { try ConversationCountRepository.count(on: conn) }
/// ```
extension SQLiteConnection {
    /// Runs `body` in `BEGIN IMMEDIATE … COMMIT` (a SAVEPOINT when a transaction is already
    /// open), rolling back whatever `body` throws.
    public func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        let nested = isInTransaction
        try execute(nested ? "SAVEPOINT sotto_write" : "BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute(nested ? "RELEASE sotto_write" : "COMMIT")
            return value
        } catch {
            if nested {
                try? execute("ROLLBACK TO sotto_write; RELEASE sotto_write")
            } else if isInTransaction {
                try? execute("ROLLBACK")
            }
            throw error
        }
    }

    /// Runs `body` in one deferred read transaction, so every query in it sees the same WAL
    /// snapshot; always ends it (ending a read changes nothing).
    public func readTransaction<T>(_ body: () throws -> T) throws -> T {
        if isInTransaction { return try body() }
        try execute("BEGIN DEFERRED")
        defer { if isInTransaction { try? execute("ROLLBACK") } }
        return try body()
    }
}
