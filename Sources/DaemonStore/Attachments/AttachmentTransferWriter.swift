import SharedStore
import SottoWire

/// Records where the fetch of an incoming attachment stands (`attachment_transfer`), with a
/// `messageStatusChanged` change in the same transaction, so every client's timeline shows
/// the new state from the change feed (docs/adr/0078). Only the daemon's fetcher writes it.
///
/// ```swift
/// try AttachmentTransferWriter.record(messageId: id, .fetching, bytesDone: 655_360, on: conn)
/// try AttachmentTransferWriter.record(messageId: id, .failed, bytesDone: 0,
///                                     failure: "the relay does not hold piece 4", on: conn)
/// ```
public enum AttachmentTransferWriter {
    /// Writes the message's state; false (and nothing written) when the message is gone (an
    /// explode or a leave took it while its file was fetched).
    @discardableResult
    public static func record(messageId: String, _ state: DBAttachmentTransfer.State, bytesDone: Int64,
                              failure: String? = nil, now: Int64 = WallClock.nowMs(),
                              on conn: SQLiteConnection) throws(StoreError) -> Bool {
        guard let row = try conn.queryOne("SELECT conversationId FROM message WHERE id = ? AND isOutgoing = 0",
                                          [.text(messageId)]) else { return false }
        try conn.run("""
            INSERT INTO attachment_transfer(messageId, state, bytesDone, failure, updatedAt) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT(messageId) DO UPDATE SET state = ?2, bytesDone = ?3, failure = ?4, updatedAt = ?5
            """, [.text(messageId), .text(state.rawValue), .integer(bytesDone), .optional(failure), .integer(now)])
        try ChangeLog.append(conn, kind: .messageStatusChanged, conversationId: try row.string(0), entityId: messageId, now: now)
        return true
    }
}
