import SharedStore

/// The daemon's reads of whole `message` rows, in timeline order `(sentAt, id)`: one by id
/// (the change feed's pass), a page before a cursor (`sotto read`, a window being filled), a
/// conversation's count. The worker reads only whether one exists (SharedStore's
/// `MessageRepository`).
///
/// ```swift
/// var page = try MessageRowRepository.page(conversationId: id, before: nil, limit: 50, on: conn)
/// if let oldest = page.last {
///     page = try MessageRowRepository.page(conversationId: id,
///                                          before: .init(sentAt: oldest.sentAt, id: oldest.id),
///                                          limit: 50, on: conn)
/// }
/// ```
public enum MessageRowRepository {
    /// A position in the timeline.
    public struct Cursor: Sendable, Equatable {
        public var sentAt: Int64
        public var id: String

        public init(sentAt: Int64, id: String) {
            self.sentAt = sentAt
            self.id = id
        }
    }

    public static func find(id: String, on conn: SQLiteConnection) throws(StoreError) -> DBMessage? {
        try conn.queryOne("SELECT \(columns) FROM \(joined) WHERE id = ?", [.text(id)])
            .map { row throws(StoreError) in try message(row, on: conn) }
    }

    /// Up to `limit` messages strictly before `before` (or the newest), newest first.
    public static func page(conversationId: String, before: Cursor?, limit: Int,
                            on conn: SQLiteConnection) throws(StoreError) -> [DBMessage] {
        let rows: [Row]
        let limit = SQLiteValue.integer(Int64(max(0, limit)))
        if let before {
            rows = try conn.query("""
                SELECT \(columns) FROM \(joined)
                WHERE conversationId = ? AND (sentAt, id) < (?, ?)
                ORDER BY sentAt DESC, id DESC LIMIT ?
                """, [.text(conversationId), .integer(before.sentAt), .text(before.id), limit])
        } else {
            rows = try conn.query("""
                SELECT \(columns) FROM \(joined)
                WHERE conversationId = ? ORDER BY sentAt DESC, id DESC LIMIT ?
                """, [.text(conversationId), limit])
        }
        var out: [DBMessage] = []
        for row in rows { out.append(try message(row, on: conn)) }
        return out
    }

    // MARK: A row with its attachment's fetch

    /// The message's columns, then its `attachment_transfer` row's (NULL when it has none).
    private static let columns = DBMessage.columns + ", t.state, t.bytesDone, t.failure"
    private static let joined = "message LEFT JOIN attachment_transfer t ON t.messageId = message.id"

    private static func message(_ row: Row, on conn: SQLiteConnection) throws(StoreError) -> DBMessage {
        var message = try DBMessage(row: row, on: conn)
        if let state = try row.optionalString(11) {
            guard let known = DBAttachmentTransfer.State(rawValue: state) else {
                throw .sqlite(code: SQLiteResultCode.mismatch, message: "attachment_transfer.state has an unknown value")
            }
            message.transfer = DBAttachmentTransfer(state: known, bytesDone: try row.int64(12), failure: try row.optionalString(13))
        }
        return message
    }

    public static func count(conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> Int64 {
        try conn.queryOne("SELECT count(*) FROM message WHERE conversationId = ?",
                          [.text(conversationId)])?.int64(0) ?? 0
    }
}
