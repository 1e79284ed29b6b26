import SottoWire

/// The worker's read for serving a stored attachment file to a device that asks for it
/// (docs/protocol/attachment-direct.md §3): the attachment message with that id, its
/// conversation and that conversation's inbox, and the reference opened with the
/// conversation's key. The caller puts the inbox's identity in the connection's keyring first.
///
/// ```swift
/// guard let message = try ServedAttachmentRepository.message(id: request.messageId, on: conn) else { … unknown_attachment … }
/// keys.remember(try keystore.identity(inboxId: message.inboxId))
/// let json = try ServedAttachmentRepository.content(of: message, on: conn)   // nil: does not open
/// ```
public enum ServedAttachmentRepository {
    /// An attachment message as stored, its content still sealed.
    public struct Message: Sendable, Equatable {
        public let id: String
        public let conversationId: String
        /// The inbox of the conversation: whose key opens the content.
        public let inboxId: String
        /// When the conversation explodes (or exploded): nothing of it is served after.
        public let expiresAtMs: Int64?
        let content: SQLiteValue
    }

    /// The message with this id when it is an attachment message; nil for any other.
    public static func message(id: String, on conn: SQLiteConnection) throws(StoreError) -> Message? {
        guard let row = try conn.queryOne("""
            SELECT m.conversationId, c.inboxId, c.expiresAt, m.content FROM message m
            JOIN conversation c ON c.id = m.conversationId WHERE m.id = ? AND m.contentType = ?
            """, [.text(id), .text(ContentType.attachment)]) else { return nil }
        return Message(id: id, conversationId: try row.string(0), inboxId: try row.string(1),
                       expiresAtMs: try row.optionalInt64(2), content: row.values[3])
    }

    /// The message's content opened with its conversation's key: the reference's JSON. Nil
    /// when it does not open (no key for it here, or damaged).
    public static func content(of message: Message, on conn: SQLiteConnection) throws(StoreError) -> [UInt8]? {
        try conn.openedCell(message.content, .messageContent, conversationId: message.conversationId, rowId: message.id).bytes
    }
}
