import DaemonStore
import SharedStore

/// The shared database's copy of which conversations clients hold open
/// (`conversation_local_state.isOpen`, written by `OpenStateWriter`): the worker is another
/// process, and it decides in the transaction that stores a message whether to notify, so
/// the open state it reads must be in the file (docs/adr/0062). `OpenConversations` writes
/// it when the first client opens a conversation and when the last one leaves; the daemon
/// clears it at start.
///
/// ```swift
/// let column = OpenStateColumn(database: database)
/// try await column.record(inboxId, isOpen: true)
/// ```
struct OpenStateColumn: Sendable {
    let database: DaemonDatabase

    func record(_ inboxId: String, isOpen: Bool) async throws {
        try await database.write { conn in try OpenStateWriter.set(isOpen, inboxId: inboxId, on: conn) }
    }

    /// At start, before any client connects: nothing is open yet. Returns how many a
    /// previous run left set (it crashed, or was killed, with a client attached).
    func clearAll() throws -> Int {
        try database.write { conn in try OpenStateWriter.clearAll(on: conn) }
    }
}
