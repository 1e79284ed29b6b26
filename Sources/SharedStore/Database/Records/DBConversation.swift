/// A row of `conversation`: a group one local inbox belongs to.
///
/// ```swift
/// let c = try ConversationRepository.find(id: conversationId, on: conn)
/// c?.state == .pendingJoin   // until the creator's membership message arrives
/// ```
public struct DBConversation: Sendable, Equatable {
    public enum State: String, Sendable {
        case pendingJoin
        case active
    }

    public var id: String
    public var inboxId: String
    public var clientId: String
    public var topic: String
    public var name: String?
    public var creatorInboxId: String
    public var createdAt: Int64
    public var expiresAt: Int64?
    public var state: State

    public init(id: String, inboxId: String, clientId: String, topic: String, name: String?,
                creatorInboxId: String, createdAt: Int64, expiresAt: Int64? = nil,
                state: State = .active) {
        self.id = id
        self.inboxId = inboxId
        self.clientId = clientId
        self.topic = topic
        self.name = name
        self.creatorInboxId = creatorInboxId
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.state = state
    }

    /// The topic PROTOCOL §1 assigns to a conversation id.
    public static func topic(for conversationId: String) -> String {
        "/sotto/1/c/" + conversationId
    }

    package static let columns = "id, inboxId, clientId, topic, name, creatorInboxId, createdAt, expiresAt, state"

    /// Decodes a row, opening its sealed name with `conn`'s keys (a name that does not open reads as nil).
    package init(row: Row, on conn: SQLiteConnection) throws(StoreError) {
        let stateText = try row.string(8)
        guard let state = State(rawValue: stateText) else {
            throw .sqlite(code: SQLiteResultCode.mismatch, message: "conversation.state has an unknown value")
        }
        let id = try row.string(0)
        self.init(id: id, inboxId: try row.string(1), clientId: try row.string(2),
                  topic: try row.string(3),
                  name: try conn.openedText(row.values[4], .conversationName, conversationId: id, rowId: id),
                  creatorInboxId: try row.string(5), createdAt: try row.int64(6),
                  expiresAt: try row.optionalInt64(7), state: state)
    }
}
