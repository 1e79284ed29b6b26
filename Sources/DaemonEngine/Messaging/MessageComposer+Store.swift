import DaemonStore
import SharedStore
import SottoWire

extension MessageComposer.Composed {
    /// Stores the message, one outbox row per push and, when the pushes go by reference, the
    /// sealed body once (docs/adr/0032), all in the caller's transaction: a crash leaves either
    /// everything or nothing. Returns the change_log seq.
    ///
    /// ```swift
    /// try await database.write { conn in try composed.insert(now: now, on: conn) }
    /// ```
    @discardableResult
    func insert(now: Int64, on conn: SQLiteConnection) throws -> Int64 {
        let seq = try OutgoingMessageWriter.insert(outgoing, pushes: pushes, now: now, on: conn)
        if let body, !pushes.isEmpty {
            try OutboxBodyWriter.store(messageId: outgoing.id, bodyId: Hex.encode(body.id), sealed: body.sealed, on: conn)
        }
        return seq
    }
}
