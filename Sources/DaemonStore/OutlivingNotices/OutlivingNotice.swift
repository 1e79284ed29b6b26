import SharedStore
import SottoCrypto
import SottoWire

/// One notice that outlives its conversation (docs/adr/0034): the sealed push of an explode
/// (later a leave or a removal) for one member, moved out of the outbox in the transaction
/// that deleted the conversation, waiting until the member's device acks it (or its relay
/// stores it) or it is older than the age bound. It names no conversation and holds no key.
///
/// ```swift
/// for notice in try OutlivingNoticeRepository.due(now: WallClock.nowMs(), limit: 64, on: conn) {
///     deliver(notice.payload, body: notice.sealedBody, to: notice.endpoint)
/// }
/// ```
public struct OutlivingNotice: Sendable, Equatable {
    public var id: Int64
    /// The member's mailbox id; the push names it in clear too.
    public var clientId: String
    public var endpoint: String
    /// The sealed push, byte for byte as the outbox held it (so a relay's `Nats-Msg-Id` stays the same).
    public var payload: [UInt8]
    /// The sealed body the push references (docs/protocol/bodies.md), if any.
    public var bodyId: String?
    public var sealedBody: [UInt8]?
    public var attempts: Int64
    public var nextAttemptAt: Int64
    public var lastError: String?
    /// When the conversation was deleted and the notice began to wait on its own.
    public var queuedAt: Int64

    /// Content types whose pending pushes outlive their conversation: what tells a member the
    /// conversation is gone for it must reach it after the conversation is gone here.
    public static let contentTypes: [String] = [ContentType.explodeSettings, ContentType.leave]

    static let columns = """
        n.id, n.clientId, n.endpoint, n.payload, n.bodyId, b.sealed, n.attempts, n.nextAttemptAt, n.lastError, n.queuedAt
        """

    init(row: Row) throws(StoreError) {
        id = try row.int64(0)
        clientId = try row.string(1)
        endpoint = try row.string(2)
        payload = try row.blob(3)
        bodyId = try row.optionalString(4)
        sealedBody = row.values[5] == .null ? nil : try row.blob(5)
        attempts = try row.int64(6)
        nextAttemptAt = try row.int64(7)
        lastError = try row.optionalString(8)
        queuedAt = try row.int64(9)
    }
}
