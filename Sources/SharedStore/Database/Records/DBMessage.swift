/// A row of `message`: one timeline entry, incoming or outgoing, ordered by `(sentAt, id)`.
///
/// ```swift
/// let page = try MessageRowRepository.page(conversationId: id, before: nil, limit: 50, on: conn)
/// page.first?.deliveryStatus   // .pending for an outgoing message not yet pushed
/// ```
public struct DBMessage: Sendable, Equatable {
    public enum DeliveryStatus: String, Sendable {
        case pending
        case sent
        case failed
    }

    public var id: String
    public var conversationId: String
    public var senderInboxId: String
    public var sentAt: Int64
    public var receivedAt: Int64
    public var contentType: String
    public var content: [UInt8]
    public var fallback: String?
    public var referenceId: String?
    public var isOutgoing: Bool
    public var deliveryStatus: DeliveryStatus?
    /// Its sealed content or fallback did not open (docs/adr/0052): `content` is empty and
    /// `fallback` nil, and a reader reports it instead of showing text.
    public var isUnreadable = false
    /// An incoming attachment's fetch on this device, when the read joined it (the daemon's
    /// `MessageRowRepository`); nil otherwise.
    public var transfer: DBAttachmentTransfer?

    public init(id: String, conversationId: String, senderInboxId: String, sentAt: Int64,
                receivedAt: Int64, contentType: String, content: [UInt8], fallback: String?,
                referenceId: String?, isOutgoing: Bool, deliveryStatus: DeliveryStatus?) {
        self.id = id
        self.conversationId = conversationId
        self.senderInboxId = senderInboxId
        self.sentAt = sentAt
        self.receivedAt = receivedAt
        self.contentType = contentType
        self.content = content
        self.fallback = fallback
        self.referenceId = referenceId
        self.isOutgoing = isOutgoing
        self.deliveryStatus = deliveryStatus
    }

    package static let columns = """
        id, conversationId, senderInboxId, sentAt, receivedAt, contentType, content, fallback, \
        referenceId, isOutgoing, deliveryStatus
        """

    /// Decodes a row, opening its sealed cells with `conn`'s keys.
    package init(row: Row, on conn: SQLiteConnection) throws(StoreError) {
        let status = try row.optionalString(10)
        let delivery = status.flatMap(DeliveryStatus.init(rawValue:))
        if status != nil, delivery == nil {
            throw .sqlite(code: SQLiteResultCode.mismatch, message: "message.deliveryStatus has an unknown value")
        }
        let id = try row.string(0)
        let conversationId = try row.string(1)
        let content = try conn.openedCell(row.values[6], .messageContent, conversationId: conversationId, rowId: id)
        let fallback = try conn.openedCell(row.values[7], .messageFallback, conversationId: conversationId, rowId: id)
        self.init(id: id, conversationId: conversationId,
                  senderInboxId: try row.string(2), sentAt: try row.int64(3),
                  receivedAt: try row.int64(4), contentType: try row.string(5),
                  content: content.bytes ?? [], fallback: fallback.bytes.flatMap { String(validating: $0, as: UTF8.self) },
                  referenceId: try row.optionalString(8), isOutgoing: try row.bool(9),
                  deliveryStatus: delivery)
        isUnreadable = content.isUnreadable || fallback.isUnreadable
    }
}
