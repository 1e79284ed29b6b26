/// Every column that holds what a person wrote or is called (docs/adr/0052 lists what stays
/// visible and why). Each is sealed with its conversation's key, its cell bound to the row
/// by `rowId`.
///
/// ```swift
/// SealedColumn.messageContent.address(rowId: messageId)   // message.content of that row
/// ```
public enum SealedColumn: String, Sendable, CaseIterable {
    case messageContent
    case messageFallback
    case conversationName
    case memberProfileName
    case joinRequestProfileName
    case rosterPendingContent
    case rosterRenameProfileName

    public var table: String {
        switch self {
        case .messageContent, .messageFallback: "message"
        case .conversationName: "conversation"
        case .memberProfileName: "member_profile"
        case .joinRequestProfileName: "join_request"
        case .rosterPendingContent: "roster_pending"
        case .rosterRenameProfileName: "roster_rename"
        }
    }

    public var column: String {
        switch self {
        case .messageContent, .rosterPendingContent: "content"
        case .messageFallback: "fallback"
        case .conversationName: "name"
        case .memberProfileName: "name"
        case .joinRequestProfileName, .rosterRenameProfileName: "profileName"
        }
    }

    /// What identifies the row inside its conversation: message id (message, join_request's
    /// messageId, roster_pending's messageId), the conversation id (conversation), the
    /// member's inbox id (member_profile, roster_rename).
    public var rowIdColumn: String {
        switch self {
        case .messageContent, .messageFallback: "id"
        case .conversationName: "id"
        case .memberProfileName, .rosterRenameProfileName: "inboxId"
        case .joinRequestProfileName, .rosterPendingContent: "messageId"
        }
    }

    /// The column naming the row's conversation.
    public var conversationIdColumn: String { self == .conversationName ? "id" : "conversationId" }
}
