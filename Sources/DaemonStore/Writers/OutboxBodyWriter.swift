import SharedStore

/// The sealed bodies of our own messages that go by reference (docs/protocol/bodies.md,
/// docs/adr/0032): one row per message, however many members it goes to, written in the
/// transaction that stores the message and its outbox rows, and deleted in the transaction
/// that records the last of those pushes leaving `pending` (sent, relayed or failed). An
/// explosion's cascade from `message` takes it too.
///
/// ```swift
/// try OutboxBodyWriter.store(messageId: mid, bodyId: reference.id, sealed: body.sealed, on: conn)
/// try OutboxBodyWriter.releaseIfDone(messageId: mid, on: conn)   // after each recorded attempt
/// ```
public enum OutboxBodyWriter {
    public static func store(messageId: String, bodyId: String, sealed: [UInt8],
                             on conn: SQLiteConnection) throws(StoreError) {
        try conn.run("INSERT INTO outbox_body(messageId, bodyId, sealed) VALUES (?, ?, ?)",
                     [.text(messageId), .text(bodyId), .blob(sealed)])
    }

    /// Deletes the message's body when no push of it is pending any more. Returns whether it did.
    @discardableResult
    public static func releaseIfDone(messageId: String, on conn: SQLiteConnection) throws(StoreError) -> Bool {
        try conn.run("""
            DELETE FROM outbox_body WHERE messageId = ?1
              AND NOT EXISTS (SELECT 1 FROM outbox WHERE messageId = ?1 AND state = 'pending')
            """, [.text(messageId)]) > 0
    }
}
