/// A row of `outbox`: one push of one outgoing message to one member.
///
/// ```swift
/// for item in try OutboxRepository.due(now: WallClock.nowMs(), limit: 20, on: conn) { … }
/// ```
public struct DBOutboxItem: Sendable, Equatable {
    public enum State: String, Sendable {
        case pending
        /// Stored by the member's relay (its JetStream publish ack): the outbox is done with it;
        /// the member's device fetches it when it is online (docs/adr/0028).
        case relayed
        /// Acked by the member's device itself (a direct `unix:` or `tcp:` endpoint).
        case sent
        /// The member's device said, in a signed receipt, that it stored the message
        /// (docs/protocol/receipts.md); a receipt saying it could not moves the row to `failed`.
        case delivered
        case failed
    }

    public var messageId: String
    public var memberInboxId: String
    public var endpoint: String
    public var payload: [UInt8]
    public var state: State
    public var attempts: Int64
    public var nextAttemptAt: Int64
    public var lastError: String?
    /// The member's mailbox id, as the push names it: a relay stores the push in
    /// `sotto.mb.<clientId>` (docs/adr/0028). Written with the push; NULL only in a row the
    /// file held before schema v13 that was no longer pending, or whose payload did not
    /// decode (``OutboxAddressMigration``).
    public var clientId: String?
    /// The id of the sealed body the push references (docs/protocol/bodies.md), nil for a push
    /// that carries its message.
    public var bodyId: String?

    package static let columns = "messageId, memberInboxId, endpoint, payload, state, attempts, nextAttemptAt, lastError, clientId, bodyId"

    package init(row: Row) throws(StoreError) {
        guard let state = State(rawValue: try row.string(4)) else {
            throw .sqlite(code: SQLiteResultCode.mismatch, message: "outbox.state has an unknown value")
        }
        messageId = try row.string(0)
        memberInboxId = try row.string(1)
        endpoint = try row.string(2)
        payload = try row.blob(3)
        self.state = state
        attempts = try row.int64(5)
        nextAttemptAt = try row.int64(6)
        lastError = try row.optionalString(7)
        clientId = try row.optionalString(8)
        bodyId = try row.optionalString(9)
    }
}
