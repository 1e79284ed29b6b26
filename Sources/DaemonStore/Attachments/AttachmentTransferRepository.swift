import SharedStore
import SottoWire

/// The incoming attachment messages whose file the daemon's fetcher may still have to fetch:
/// those with no `attachment_transfer` row (never tried: the daemon was down when the worker
/// stored them, or the file was over the automatic size) and those a stopped daemon left
/// `fetching` (docs/adr/0078). Ids only: the fetcher opens each reference itself.
///
/// ```swift
/// for id in try AttachmentTransferRepository.unfinished(on: conn) { await fetcher.consider(messageId: id) }
/// ```
public enum AttachmentTransferRepository {
    public static func unfinished(on conn: SQLiteConnection) throws(StoreError) -> [String] {
        var ids: [String] = []
        for row in try conn.query("""
            SELECT m.id FROM message m LEFT JOIN attachment_transfer t ON t.messageId = m.id
            WHERE m.contentType = ? AND m.isOutgoing = 0 AND (t.state IS NULL OR t.state = 'fetching')
            ORDER BY m.receivedAt, m.id
            """, [.text(ContentType.attachment)]) {
            ids.append(try row.string(0))
        }
        return ids
    }
}
