/// A row of `conversation_local_state`: this device's view of a conversation.
///
/// ```swift
/// let state = try LocalStateRepository.state(of: conversationId, on: conn)
/// state?.unreadCount
/// ```
public struct DBLocalState: Sendable, Equatable {
    public var conversationId: String
    public var unreadCount: Int64
    public var lastReadAt: Int64?
    public var muted: Bool
    public var isOpen: Bool

    package static let columns = "conversationId, unreadCount, lastReadAt, muted, isOpen"

    package init(row: Row) throws(StoreError) {
        conversationId = try row.string(0)
        unreadCount = try row.int64(1)
        lastReadAt = try row.optionalInt64(2)
        muted = try row.bool(3)
        isOpen = try row.bool(4)
    }
}
