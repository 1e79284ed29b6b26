import SharedStore

/// Reads the sealed body a pending push references (``OutboxBodyWriter`` stores it).
///
/// ```swift
/// if let body = try OutboxBodyRepository.body(messageId: item.messageId, on: conn) {
///     PushDelivery.deliver(item.payload, body: body.sealed, to: item.endpoint)
/// }
/// ```
public enum OutboxBodyRepository {
    public struct Body: Sendable, Equatable {
        /// 32 hex: the id the pushes name (`notificationData.body.id`).
        public let bodyId: String
        public let sealed: [UInt8]
    }

    public static func body(messageId: String, on conn: SQLiteConnection) throws(StoreError) -> Body? {
        guard let row = try conn.queryOne("SELECT bodyId, sealed FROM outbox_body WHERE messageId = ?", [.text(messageId)])
        else { return nil }
        return Body(bodyId: try row.string(0), sealed: try row.blob(1))
    }
}
