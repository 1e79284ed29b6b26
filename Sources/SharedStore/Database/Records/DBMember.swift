/// A row of `member`: who may send into a conversation, and where to push to them.
///
/// ```swift
/// let members = try MemberRepository.members(of: conversationId, on: conn)
/// members.first { $0.role == .creator }
/// ```
public struct DBMember: Sendable, Equatable {
    public enum Role: String, Sendable {
        case creator
        case member
    }

    public var conversationId: String
    public var inboxId: String
    /// Compressed secp256k1 public key, hex.
    public var publicKey: String
    public var endpoint: String
    public var clientId: String
    public var role: Role

    public init(conversationId: String, inboxId: String, publicKey: String, endpoint: String,
                clientId: String, role: Role) {
        self.conversationId = conversationId
        self.inboxId = inboxId
        self.publicKey = publicKey
        self.endpoint = endpoint
        self.clientId = clientId
        self.role = role
    }

    static let columns = "conversationId, inboxId, publicKey, endpoint, clientId, role"

    init(row: Row) throws(StoreError) {
        guard let role = Role(rawValue: try row.string(5)) else {
            throw .sqlite(code: SQLiteResultCode.mismatch, message: "member.role has an unknown value")
        }
        self.init(conversationId: try row.string(0), inboxId: try row.string(1),
                  publicKey: try row.string(2), endpoint: try row.string(3),
                  clientId: try row.string(4), role: role)
    }
}
