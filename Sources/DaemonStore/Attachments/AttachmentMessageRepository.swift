import SharedStore
import SottoWire

/// The daemon's reads of attachment messages by their content type (ids only: the caller
/// opens each reference itself): the incoming ones whose file the fetcher may still have to
/// fetch, and every one of a conversation, whose files an explode deletes from the relays
/// (docs/adr/0078).
///
/// ```swift
/// for id in try AttachmentMessageRepository.unfinishedFetches(on: conn) { … }   // at start-up
/// let ids = try AttachmentMessageRepository.messageIds(conversationId: c, on: conn)   // before an explode
/// ```
public enum AttachmentMessageRepository {
    /// Incoming attachment messages with no `attachment_transfer` row (never tried: the daemon
    /// was down when the worker stored them, or the file was over the automatic size) or one a
    /// stopped daemon left `fetching`, oldest first.
    public static func unfinishedFetches(on conn: SQLiteConnection) throws(StoreError) -> [String] {
        try ids("""
            SELECT m.id FROM message m LEFT JOIN attachment_transfer t ON t.messageId = m.id
            WHERE m.contentType = ? AND m.isOutgoing = 0 AND (t.state IS NULL OR t.state = 'fetching')
            ORDER BY m.receivedAt, m.id
            """, [.text(ContentType.attachment)], on: conn)
    }

    /// Every attachment message of the conversation, sent or received.
    public static func messageIds(conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> [String] {
        try ids("SELECT id FROM message WHERE conversationId = ? AND contentType = ? ORDER BY id",
                [.text(conversationId), .text(ContentType.attachment)], on: conn)
    }

    private static func ids(_ sql: String, _ values: [SQLiteValue], on conn: SQLiteConnection) throws(StoreError) -> [String] {
        var ids: [String] = []
        for row in try conn.query(sql, values) { ids.append(try row.string(0)) }
        return ids
    }
}
