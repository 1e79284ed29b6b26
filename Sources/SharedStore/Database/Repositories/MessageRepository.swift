/// The worker's read of `message`: whether a message is stored (the dedupe key). The daemon's
/// reads of whole rows, by id and a page of the timeline, are DaemonStore's `MessageRowRepository`.
///
/// ```swift
/// if try MessageRepository.exists(id: message.id, on: conn) { … duplicate … }
/// ```
public enum MessageRepository {
    /// Whether a message with this id is stored (the dedupe key), without reading or opening it.
    public static func exists(id: String, on conn: SQLiteConnection) throws(StoreError) -> Bool {
        try conn.queryOne("SELECT 1 FROM message WHERE id = ?", [.text(id)]) != nil
    }
}
