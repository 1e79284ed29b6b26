import ControlProtocol

/// One value of every wire type, each optional member both present and absent, with text
/// that needs escaping: what the round-trip and schema tests run through both ends.
enum WireSamples {
    static let tricky = "quote \" backslash \\ newline \n tab \t nul \u{0} del \u{7f} é 👍 </script>"

    static let status = StatusResult(
        pid: 4242, version: "0.9.0", groupDirectory: "/home/ada/.local/share/sotto", runtimeDirectory: "/run/user/1000/sotto",
        conversations: 3, awakeCount: 2, awake: ["aa", "bb"], protectedAwake: ["bb"], sleepingCount: 1, capacity: 20,
        wakeReasons: ["message": 2, "pushNotification": 5], unusedInboxReady: true, unusedInboxHits: 1, unusedInboxMisses: 0,
        lastSeq: 9_000_000_000_001, walBytes: 4_096, checkpoints: CheckpointCounts(passive: 3, truncate: 1, busy: 0),
        uptimeMs: 12_345, damagedIdentities: [DamagedIdentity(clientId: "c1", reason: tricky)],
        databaseDamaged: "the database is damaged", control: ControlFigures(connections: 2, maxConnections: 256,
                                                                           bufferedBytes: 10, refused: 0, evicted: 1, fileLimitHits: 0),
        openInClient: ["bb": 2])
    static let bareStatus = StatusResult(
        pid: 1, version: "", groupDirectory: "/g", runtimeDirectory: "/r", conversations: 0, awakeCount: 0, awake: [],
        protectedAwake: [], sleepingCount: 0, capacity: 1, wakeReasons: [:], unusedInboxReady: false, unusedInboxHits: 0,
        unusedInboxMisses: 0, lastSeq: 0, walBytes: 0, checkpoints: CheckpointCounts(passive: 0, truncate: 0, busy: 0),
        uptimeMs: 0, damagedIdentities: [])

    static let conversation = ConversationInfo(id: "c0ffee", state: "active", inboxId: "ab", unread: 7, members: 3,
                                               awake: true, isCreator: true, name: tricky, expiresAtMs: 1_900_000_000_000,
                                               muted: true)
    static let bareConversation = ConversationInfo(id: "c0ffef", state: "pending", inboxId: "ac", unread: 0, members: 1,
                                                   awake: false, isCreator: false)
    static let message = MessageInfo(id: "m1", conversationId: "c0ffee", senderInboxId: "ab", sentAtMs: 1_700_000_000_123,
                                     contentType: "text", text: tricky, outgoing: false, deliveryStatus: "received",
                                     referenceId: "m0", senderName: "Ada")
    static let bareMessage = MessageInfo(id: "m2", conversationId: "c0ffee", senderInboxId: "ab", sentAtMs: 0,
                                         contentType: "reaction", text: "", outgoing: true, deliveryStatus: "pending")
    static let outgoingMessage = MessageInfo(
        id: "m3", conversationId: "c0ffee", senderInboxId: "ab", sentAtMs: 1, contentType: "text", text: "hi", outgoing: true,
        deliveryStatus: "pending",
        deliveries: [MessageDelivery(member: "cd", state: "relayed", attempts: 1),
                     MessageDelivery(member: "ef", state: "pending", attempts: 3, lastError: tricky)])
    /// A file from a member: its attachment object, name and caption as hostile as any text.
    static let attachmentMessage = MessageInfo(
        id: "m4", conversationId: "c0ffee", senderInboxId: "ab", sentAtMs: 2, contentType: "sotto/attachment:1.0",
        text: "📎 x (1.2 MiB, waiting)", outgoing: false, deliveryStatus: "received", senderName: "Ada",
        attachment: AttachmentInfo(name: tricky, size: 1_258_291, mediaType: "image/jpeg", state: "waiting", caption: tricky))
    static let change = ChangeNotification(seq: 12, kind: "messageInserted", writerPid: 777, createdAtMs: 1_700_000_000_000,
                                           conversationId: "c0ffee", entityId: "m1", text: tricky, outgoing: false,
                                           senderInboxId: "ab", senderName: "Ada", message: message)
    /// A status change: the message with its new status and pushes, no `sotto watch` members.
    static let statusChange = ChangeNotification(seq: 13, kind: "messageStatusChanged", writerPid: 777, createdAtMs: 1_700_000_000_001,
                                                 conversationId: "c0ffee", entityId: "m3", message: outgoingMessage)
    static let bareChange = ChangeNotification(seq: 1, kind: "inboxCreated", writerPid: 1, createdAtMs: 0)
    static let gap = ChangeGap(afterSeq: 10, resumedAtSeq: 14, reason: "database disk image is malformed", remedy: "restore a backup")

    /// Every method: params samples and result samples.
    static func forEachMethod(_ check: (any ControlRequest, any WireCodable) throws -> Void) rethrows {
        try check(StatusParams(), status)
        try check(StatusParams(), bareStatus)
        try check(ListConversationsParams(), ConversationList(conversations: [conversation, bareConversation]))
        try check(ListConversationsParams(), ConversationList(conversations: []))
        try check(ListConversationsParams(), ConversationList(conversations: [bareConversation], refusedJoins: [
            RefusedJoinInfo(id: "c0ffed", reason: "revoked", reasonText: tricky, askedAtMs: 1_700_000_000_000, refusedAtMs: 1_700_000_000_500),
        ]))
        try check(NewConversationParams(name: tricky, profileName: "Ada"), NewConversationResult(conversationId: "c", inboxId: "i", topic: "t"))
        try check(NewConversationParams(), NewConversationResult(conversationId: "c", inboxId: "i", topic: "t"))
        try check(ReadMessagesParams(conversation: "c0", limit: 10_000),
                  MessageList(messages: [message, bareMessage, outgoingMessage, attachmentMessage]))
        try check(ReadMessagesParams(conversation: "c0"), MessageList(messages: []))
        try check(SendMessageParams(conversation: "c0", text: tricky, replyTo: "m0"), SentMessage(messageId: "m9", recipients: 2))
        try check(SendMessageParams(conversation: "c0", text: "hi"), SentMessage(messageId: "m9", recipients: 0))
        try check(SendAttachmentParams(conversation: "c0", path: "/home/ada/\(tricky).jpg", name: tricky, caption: tricky),
                  SentAttachment(messageId: "m9", recipients: 2, name: tricky, size: 104_857_600, storedLength: 104_883_208,
                                 mediaType: "image/jpeg"))
        try check(SendAttachmentParams(conversation: "c0", path: "/tmp/a"),
                  SentAttachment(messageId: "m9", recipients: 0, name: "a", size: 0, storedLength: 4_120, mediaType: "application/octet-stream"))
        try check(SaveAttachmentParams(message: "3fa2"),
                  SavedAttachment(messageId: "3fa2", name: tricky, size: 104_857_600, mediaType: "image/jpeg"))
        try check(SaveAttachmentParams(message: "m"), SavedAttachment(messageId: "m", name: "a", size: 0, mediaType: "application/octet-stream"))
        try check(MarkReadParams(conversation: "c0"), EmptyObject())
        try check(MuteConversationParams(conversation: "c0", muted: true), MuteConversationResult(conversationId: "c0ffee", muted: true))
        try check(MuteConversationParams(conversation: "c0", muted: false), MuteConversationResult(conversationId: "c0ffee", muted: false))
        try check(CreateInviteParams(conversation: "c0", expiresInMs: 3_600_000), InviteResult(code: "sotto1:x", inviteId: "v", expiresAtMs: 5))
        try check(CreateInviteParams(conversation: "c0"), InviteResult(code: "sotto1:x", inviteId: "v"))
        try check(CreateInviteParams(conversation: "c0", singleUse: true), InviteResult(code: "sotto1:x", inviteId: "v"))
        try check(RemoveMemberParams(conversation: "c0", member: "Bob"), RemovedMember(conversationId: "c0ffee", inboxId: "ab", members: 2))
        try check(RenameParams(conversation: "c0", name: "Bea"), RenameResult(conversationId: "c0ffee", profileName: "Bea", members: 1))
        try check(NotificationPreviewParams(), NotificationPreviewResult(device: "full", effective: "full"))
        try check(ReceiptsParams(conversation: "c0"), ReceiptsResult(conversationId: "c0", enabled: true))
        try check(ReceiptsParams(conversation: "c0", enabled: false), ReceiptsResult(conversationId: "c0", enabled: false))
        try check(NotificationPreviewParams(conversation: "c0", preview: "default"),
                  NotificationPreviewResult(device: "name", conversationId: "c0ffee", effective: "name"))
        try check(NotificationPreviewParams(preview: "none"), NotificationPreviewResult(device: "none", conversationId: "c0", conversationPreview: "none", effective: "none"))
        try check(RevokeInviteParams(conversation: "c0", invite: "9f3e"), RevokedInvite(inviteId: "9f3e00", revokedNow: true))
        try check(RevokeInviteParams(conversation: "c0", invite: "sotto1:abc"), RevokedInvite(inviteId: "9f3e00", revokedNow: false))
        try check(JoinConversationParams(code: "sotto1:abc", profileName: tricky), JoinResult(conversationId: "c", state: "pending", inboxId: "i", name: "Trip"))
        try check(JoinConversationParams(code: "sotto1:abc"), JoinResult(conversationId: "c", state: "pending", inboxId: "i"))
        try check(ReactParams(conversation: "c0", message: "m1", emoji: "👍", remove: true), SentMessage(messageId: "r1", recipients: 1))
        try check(ReactParams(conversation: "c0", message: "m1", emoji: "👍"), SentMessage(messageId: "r1", recipients: 1))
        try check(ExplodeParams(conversation: "c0", atMs: 1_900_000_000_000),
                  ExplodeResult(conversationId: "c0", expiresAtMs: 1_900_000_000_000, sequence: 2, deleted: false,
                                delivered: 2, undelivered: 1))
        try check(ExplodeParams(conversation: "c0", cancel: true),
                  ExplodeResult(conversationId: "c0", expiresAtMs: nil, sequence: 3, deleted: false, delivered: 2, undelivered: 0))
        try check(ExplodeParams(conversation: "c0"), ExplodeResult(conversationId: "c0", expiresAtMs: 1, sequence: 1, deleted: true, delivered: 0, undelivered: 0))
        try check(LeaveParams(conversation: "c0"), LeaveResult(conversationId: "c0", members: 2))
        try check(DismissRefusalParams(conversation: "c0"), DismissRefusalResult(conversationId: "c0ffed"))
        try check(SubscribeParams(since: 0), SubscribeResult(lastSeq: 99, gap: gap))
        try check(SubscribeParams(), SubscribeResult(lastSeq: 0))
    }
}
