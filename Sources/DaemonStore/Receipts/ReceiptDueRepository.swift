import SharedStore

/// The receipts this device owes (`receipt_due`, written by the worker: docs/protocol/receipts.md
/// §4), and the per-conversation switch that decides whether it owes any.
///
/// ```swift
/// let due = try ReceiptDueRepository.due(limit: 400, on: conn)   // grouped by conversation and sender
/// try ReceiptDueWriter.delete(messageIds: due.map(\.messageId), on: conn)   // the writes are ReceiptDueWriter's
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

    /// Whether this device sends receipts for the conversation (on unless turned off).
    public static func isEnabled(conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> Bool {
        try conn.queryOne("SELECT receipts FROM conversation_local_state WHERE conversationId = ?",
                          [.text(conversationId)])?.bool(0) ?? true
    }
}
