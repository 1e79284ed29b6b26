import SharedStore

/// Whether a conversation is open in a client on this device (`conversation_local_state.isOpen`):
/// the shared database's copy of the daemon's `OpenConversations`, which the worker reads in
/// the transaction that stores a message and so posts no notification for it
/// (docs/adr/0062). Not a change a client is told about: no `change_log` row.
///
/// ```swift
/// try OpenStateWriter.set(true, inboxId: inbox, on: conn)   // `sotto watch --conversation` opened it
/// try OpenStateWriter.clearAll(on: conn)                    // at start: nothing is open yet
/// ```
public enum OpenStateWriter {
    /// Sets the flag of the conversation whose inbox is `inboxId`; 0 rows when there is none
    /// (deleted meanwhile), which is fine.
    @discardableResult
    public static func set(_ isOpen: Bool, inboxId: String, on conn: SQLiteConnection) throws(StoreError) -> Int {
        try conn.run("""
            UPDATE conversation_local_state SET isOpen = ?
            WHERE conversationId IN (SELECT id FROM conversation WHERE inboxId = ?) AND isOpen != ?
            """, [.bool(isOpen), .text(inboxId), .bool(isOpen)])
    }

    /// Clears every flag: what a daemon that crashed left set must not silence a conversation
    /// once no client has it open. Returns how many were set.
    @discardableResult
    public static func clearAll(on conn: SQLiteConnection) throws(StoreError) -> Int {
        try conn.run("UPDATE conversation_local_state SET isOpen = 0 WHERE isOpen = 1")
    }
}
