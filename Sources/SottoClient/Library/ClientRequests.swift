import ControlProtocol

/// Every call the library makes, named once with its retry rule: what `ConversationActions`,
/// `Timeline`, `LiveConversationList` and the `sotto` commands all call (docs/adr/0071).
/// Only reads and marks are retried after a dropped connection; whatever acts (creates,
/// sends, tells members, deletes) is not.
///
/// ```swift
/// let page = try channel.call(ClientRequests.readPage(conversation: "3fa2", limit: 50))
/// let sent = try channel.call(ClientRequests.send(conversation: "3fa2", text: "train at 9?"))
/// ```
public enum ClientRequests {
    // MARK: Reading (retried: reading twice changes nothing more)

    /// Every conversation in `sotto ls` order (most recently active first), and refused joins.
    public static func listConversations() -> ClientRequest<ListConversationsParams> {
        ClientRequest(ListConversationsParams(), retry: true)
    }

    /// The `limit` messages before `before` (nil: the latest page, which the daemon marks read).
    public static func readPage(conversation: String, limit: Int, before: String? = nil) -> ClientRequest<ReadMessagesParams> {
        ClientRequest(ReadMessagesParams(conversation: conversation, limit: limit, before: before), retry: true)
    }

    /// Marks a conversation read on this device.
    public static func markRead(conversation: String) -> ClientRequest<MarkReadParams> {
        ClientRequest(MarkReadParams(conversation: conversation), retry: true)
    }

    /// The daemon's one-screen summary (`sotto status`).
    public static func status() -> ClientRequest<StatusParams> { ClientRequest(StatusParams(), retry: true) }

    // MARK: Messages (never retried: a second call would send again)

    /// A text, or a reply when `replyTo` names a message.
    public static func send(conversation: String, text: String, replyTo: String? = nil) -> ClientRequest<SendMessageParams> {
        ClientRequest(SendMessageParams(conversation: conversation, text: text, replyTo: replyTo), retry: false)
    }

    /// A file the daemon reads at `path` (absolute), stores encrypted and sends
    /// (`sotto send ID --file PATH`, docs/adr/0074).
    public static func sendAttachment(conversation: String, path: String, name: String? = nil,
                                      caption: String? = nil) -> ClientRequest<SendAttachmentParams> {
        ClientRequest(SendAttachmentParams(conversation: conversation, path: path, name: name, caption: caption), retry: false)
    }

    /// Adds (or with `remove` takes back) a reaction to a message.
    public static func react(conversation: String, message: String, emoji: String, remove: Bool = false) -> ClientRequest<ReactParams> {
        ClientRequest(ReactParams(conversation: conversation, message: message, emoji: emoji, remove: remove), retry: false)
    }

    // MARK: Making and sharing

    public static func create(name: String?, profileName: String? = nil) -> ClientRequest<NewConversationParams> {
        ClientRequest(NewConversationParams(name: name, profileName: profileName), retry: false)
    }

    public static func invite(conversation: String, expiresInMs: Int64? = nil, singleUse: Bool = false) -> ClientRequest<CreateInviteParams> {
        ClientRequest(CreateInviteParams(conversation: conversation, expiresInMs: expiresInMs, singleUse: singleUse), retry: false)
    }

    public static func revokeInvite(conversation: String, invite: String) -> ClientRequest<RevokeInviteParams> {
        ClientRequest(RevokeInviteParams(conversation: conversation, invite: invite), retry: false)
    }

    public static func join(code: String, profileName: String? = nil) -> ClientRequest<JoinConversationParams> {
        ClientRequest(JoinConversationParams(code: code, profileName: profileName), retry: false)
    }

    public static func dismissRefusal(conversation: String) -> ClientRequest<DismissRefusalParams> {
        ClientRequest(DismissRefusalParams(conversation: conversation), retry: false)
    }

    // MARK: This device's settings of a conversation

    public static func setMuted(_ muted: Bool, conversation: String) -> ClientRequest<MuteConversationParams> {
        ClientRequest(MuteConversationParams(conversation: conversation, muted: muted), retry: false)
    }

    /// Shows (`enabled` nil) or sets whether this device sends delivery receipts for it.
    public static func receipts(conversation: String, enabled: Bool?) -> ClientRequest<ReceiptsParams> {
        ClientRequest(ReceiptsParams(conversation: conversation, enabled: enabled), retry: false)
    }

    /// Shows (`preview` nil) or sets what notifications show, for the device or one conversation.
    public static func notificationPreview(conversation: String?, preview: String?) -> ClientRequest<NotificationPreviewParams> {
        ClientRequest(NotificationPreviewParams(conversation: conversation, preview: preview), retry: false)
    }

    /// Changes this device's profile name in a conversation: the members are told.
    public static func rename(conversation: String, name: String) -> ClientRequest<RenameParams> {
        ClientRequest(RenameParams(conversation: conversation, name: name), retry: false)
    }

    // MARK: Ending (destructive: a UI confirms first)

    public static func leave(conversation: String) -> ClientRequest<LeaveParams> {
        ClientRequest(LeaveParams(conversation: conversation), retry: false)
    }

    public static func remove(member: String, conversation: String) -> ClientRequest<RemoveMemberParams> {
        ClientRequest(RemoveMemberParams(conversation: conversation, member: member), retry: false)
    }

    /// Now (`atMs` nil), at `atMs`, or calls a scheduled explosion off (`cancel`).
    public static func explode(conversation: String, atMs: Int64? = nil, cancel: Bool = false) -> ClientRequest<ExplodeParams> {
        ClientRequest(ExplodeParams(conversation: conversation, atMs: atMs, cancel: cancel), retry: false)
    }
}
