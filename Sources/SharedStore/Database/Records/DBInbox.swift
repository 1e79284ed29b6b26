/// A row of `inbox`: one local identity, routed by its `clientId`.
///
/// ```swift
/// let inbox = try InboxRepository.find(inboxId: id, on: conn)
/// inbox?.lastActivityAt   // nil: never active
/// ```
public struct DBInbox: Sendable, Equatable {
    public var inboxId: String
    public var clientId: String
    public var createdAt: Int64
    public var lastActivityAt: Int64?

    public init(inboxId: String, clientId: String, createdAt: Int64, lastActivityAt: Int64? = nil) {
        self.inboxId = inboxId
        self.clientId = clientId
        self.createdAt = createdAt
        self.lastActivityAt = lastActivityAt
    }

    package static let columns = "inboxId, clientId, createdAt, lastActivityAt"

    package init(row: Row) throws(StoreError) {
        self.init(inboxId: try row.string(0), clientId: try row.string(1),
                  createdAt: try row.int64(2), lastActivityAt: try row.optionalInt64(3))
    }
}
