import SottoWire

/// Every method of the control socket, by its wire name (camelCase). Nothing else spells them.
///
/// ```swift
/// ControlMethodName(rawValue: "sendMessage")   // .sendMessage
/// ControlMethodName.subscribe.rawValue         // "subscribe"
/// ```
public enum ControlMethodName: String, CaseIterable, Sendable {
    case status
    case listConversations
    case newConversation
    case readMessages
    case sendMessage
    case sendAttachment
    case saveAttachment
    case markRead
    case muteConversation
    case createInvite
    case revokeInvite
    case joinConversation
    case react
    case explode
    case leave
    case removeMember
    case rename
    case notificationPreview
    case receipts
    case dismissRefusal
    case subscribe
}

/// The notifications the daemon sends without being asked (after `subscribe`, during `saveAttachment`).
///
/// ```swift
/// ControlNotificationName.change.rawValue   // "change"
/// ```
public enum ControlNotificationName: String, CaseIterable, Sendable {
    case change
    /// The next bytes of a file `saveAttachment` streams on this connection.
    case attachmentData
}

/// A method's params, tied to the method's name and its result type: what a client calls
/// and what the daemon decodes.
///
/// ```swift
/// let sent = try client.call(SendMessageParams(conversation: "ab12", text: "hello"))   // SentMessage
/// ```
public protocol ControlRequest: WireCodable {
    associatedtype Result: WireCodable
    static var method: ControlMethodName { get }
    /// One line for the OpenRPC document.
    static var summary: String { get }
    /// The application errors this method can answer with (every method can also answer
    /// `invalidParams`, `internalError` and `unavailable`).
    static var errors: [RPCErrorCode] { get }
}

extension ControlRequest {
    public static var errors: [RPCErrorCode] { [] }
    /// `Result`, for code that holds the method as `any ControlRequest.Type`.
    public static var resultType: any WireCodable.Type { Result.self }
}

/// Every method's params type, in the order the OpenRPC document lists them.
///
/// ```swift
/// ControlMethods.all.map { $0.method.rawValue }   // ["status", "listConversations", …]
/// ```
public enum ControlMethods {
    public static var all: [any ControlRequest.Type] { [
        StatusParams.self, ListConversationsParams.self, NewConversationParams.self, ReadMessagesParams.self,
        SendMessageParams.self, SendAttachmentParams.self, SaveAttachmentParams.self, MarkReadParams.self, MuteConversationParams.self, CreateInviteParams.self,
        RevokeInviteParams.self, JoinConversationParams.self, ReactParams.self, ExplodeParams.self,
        LeaveParams.self, RemoveMemberParams.self, RenameParams.self, NotificationPreviewParams.self, ReceiptsParams.self,
        DismissRefusalParams.self, SubscribeParams.self,
    ] }
}
