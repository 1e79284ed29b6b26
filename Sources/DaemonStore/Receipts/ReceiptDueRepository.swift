import SharedStore

/// The receipts this device owes (`receipt_due`, written by the worker: docs/protocol/receipts.md
/// §4), and the per-conversation switch that decides whether it owes any.
///
/// ```swift
/// let due = try ReceiptDueRepository.due(limit: 400, on: conn)   // grouped by conversation and sender
/// try ReceiptDueRepository.delete(messageIds: due.map(\.messageId), on: conn)
/// try ReceiptDueRepository.setEnabled(false, conversationId: id, on: conn)
/// ```
public enum ReceiptDueRepository {
    public struct Entry: Sendable, Equatable {
        public let messageId: String
        public let conversationId: String
        public let senderInboxId: String
        /// nil: delivered; else the ack code of a push refused for good.
        public let error: String?
    }

    /// Up to `limit` entries, grouped by conversation and sender, oldest first within a group.
    public static func due(limit: Int, on conn: SQLiteConnection) throws(StoreError) -> [Entry] {
        var out: [Entry] = []
        for row in try conn.query("""
            SELECT messageId, conversationId, senderInboxId, error FROM receipt_due
            ORDER BY conversationId, senderInboxId, createdAt, messageId LIMIT ?
            """, [.integer(Int64(limit))]) {
            out.append(Entry(messageId: try row.string(0), conversationId: try row.string(1),
                             senderInboxId: try row.string(2), error: try row.optionalString(3)))
        }
        return out
    }

    public static func delete(messageIds: [String], on conn: SQLiteConnection) throws(StoreError) {
        let statement = try conn.prepare("DELETE FROM receipt_due WHERE messageId = ?")
        for id in messageIds {
            try statement.bind([.text(id)])
            while try statement.step() {}
        }
    }

    /// Whether this device sends receipts for the conversation (on unless turned off).
    public static func isEnabled(conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> Bool {
        try conn.queryOne("SELECT receipts FROM conversation_local_state WHERE conversationId = ?",
                          [.text(conversationId)])?.bool(0) ?? true
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
