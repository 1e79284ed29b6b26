/// A row of `join_request`: someone asked to join with an invite; the creator's daemon decides.
///
/// ```swift
/// let pending = try JoinRequestRepository.pending(conversationId: id, on: conn)
/// ```
public struct DBJoinRequest: Sendable, Equatable {
    public enum State: String, Sendable {
        case pending
        case accepted
        case rejected
    }

    public var id: Int64
    public var conversationId: String
    public var inviteId: String
    public var secret: String
    public var requesterInboxId: String
    public var requesterPublicKey: String
    public var profileName: String?
    public var endpoint: String
    public var clientId: String
    public var messageId: String
    public var receivedAt: Int64
    public var state: State

    package static let columns = """
        id, conversationId, inviteId, secret, requesterInboxId, requesterPublicKey, profileName, \
        endpoint, clientId, messageId, receivedAt, state
        """

    /// Decodes a row, opening its sealed profile name with `conn`'s keys (nil when it does not open).
    package init(row: Row, on conn: SQLiteConnection) throws(StoreError) {
        guard let state = State(rawValue: try row.string(11)) else {
            throw .sqlite(code: SQLiteResultCode.mismatch, message: "join_request.state has an unknown value")
        }
        id = try row.int64(0)
        conversationId = try row.string(1)
        inviteId = try row.string(2)
        secret = try row.string(3)
        requesterInboxId = try row.string(4)
        requesterPublicKey = try row.string(5)
        profileName = try conn.openedText(row.values[6], .joinRequestProfileName, conversationId: conversationId,
                                          rowId: try row.string(9))
        endpoint = try row.string(7)
        clientId = try row.string(8)
        messageId = try row.string(9)
        receivedAt = try row.int64(10)
        self.state = state
    }
}
