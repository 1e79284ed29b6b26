import SharedStore

/// The daemon's writes on the receipts this device owes (`receipt_due`, recorded by the
/// worker's ``ReceiptWriter``): dropping the ones sent, and the per-conversation switch that
/// decides whether it owes any. ``ReceiptDueRepository`` reads them.
///
/// ```swift
/// try ReceiptDueWriter.delete(messageIds: sent.map(\.messageId), on: conn)
/// try ReceiptDueWriter.setEnabled(false, conversationId: id, on: conn)   // also drops what is owed
/// ```
public enum ReceiptDueWriter {
    /// The receipts for `messageIds` were sent (or need not be): they are owed no longer.
    public static func delete(messageIds: [String], on conn: SQLiteConnection) throws(StoreError) {
        let statement = try conn.prepare("DELETE FROM receipt_due WHERE messageId = ?")
        for id in messageIds {
            try statement.bind([.text(id)])
            while try statement.step() {}
        }
    }

    /// Turns receipts on or off; off also drops what is owed for the conversation and not
    /// sealed yet. Returns a change_log seq.
    @discardableResult
    public static func setEnabled(_ enabled: Bool, conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> Int64 {
        try conn.run("UPDATE conversation_local_state SET receipts = ? WHERE conversationId = ?",
                     [.integer(enabled ? 1 : 0), .text(conversationId)])
        if !enabled { try conn.run("DELETE FROM receipt_due WHERE conversationId = ?", [.text(conversationId)]) }
        return try ChangeLog.append(conn, kind: .localStateChanged, conversationId: conversationId, entityId: nil)
    }
}
