import DaemonCore
import DaemonLogging
import DaemonStore
import Foundation
import SharedStore
import SottoCrypto
import SottoWire

/// What the daemon does with conversations: create, list, read, send, mark read. What it does
/// when a change lands in `change_log` is decided in one place, ``ChangeRouter``. Every
/// mutation goes through SharedStore's writers inside one database write; every identity comes
/// from the keystore.
///
/// ```swift
/// let conversation = try await service.newConversation(name: "Trip", profileName: "Ann")
/// let sent = try await service.send(to: conversation.id, text: "hi", replyTo: nil)
/// ```
public actor ConversationService {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case notFound(String)
        case ambiguous(String)
        /// Something of a conversation (an invite, a message) that is not there: said as is.
        case missing(String)
        case refused(String)
        case invalid(String)

        public var description: String {
            switch self {
            case .notFound(let reference): return "no conversation matches '\(reference)'"
            case .ambiguous(let reference): return "'\(reference)' matches more than one conversation; give more of the id"
            case .refused(let reason), .invalid(let reason), .missing(let reason): return reason
            }
        }
    }

    let database: DaemonDatabase
    let unusedInboxes: UnusedInboxCache
    let windows: ConversationWindows
    /// Where other members deliver pushes for this device (`unix:<runtime>/push.sock`).
    let endpoint: String
    let inboxLRU: InboxLRU
    let identities: InboxIdentities
    let outbox: OutboxSender
    /// The creator's join requests (an invite's protection is refreshed through it).
    let joinRequests: JoinRequestHandler
    /// Where a file's stored form is kept (`sendAttachment`, `storedAttachment`).
    let attachments: AttachmentStore
    /// Brings a recipient's file when it is asked for (`storedAttachment`, docs/adr/0078).
    let attachmentFetcher: AttachmentFetcher

    init(database: DaemonDatabase, unusedInboxes: UnusedInboxCache, windows: ConversationWindows,
         endpoint: String, inboxLRU: InboxLRU, identities: InboxIdentities, outbox: OutboxSender,
         joinRequests: JoinRequestHandler, attachments: AttachmentStore, attachmentFetcher: AttachmentFetcher) {
        self.database = database
        self.unusedInboxes = unusedInboxes
        self.windows = windows
        self.endpoint = endpoint
        self.inboxLRU = inboxLRU
        self.identities = identities
        self.outbox = outbox
        self.joinRequests = joinRequests
        self.attachments = attachments
        self.attachmentFetcher = attachmentFetcher
    }

    // MARK: - Conversations

    /// A new conversation with its own identity: the pre-created unused inbox when there is
    /// one (the source app's per-conversation identity record, as PROTOCOL.md's ADR 002, and "Inbox Lifecycle Management"), recorded with this device as its creator and only member, under
    /// `profileName` (what the members' devices show for the creator).
    public func newConversation(name: String?, profileName: String?) async throws -> DBConversation {
        if let name, name.utf8.count > ContentLimits.maxConversationNameBytes {
            throw Failure.invalid("name is longer than \(ContentLimits.maxConversationNameBytes) bytes")
        }
        if let name, !MessageContent.isDisplayable(name) { throw Failure.invalid("name contains control characters") }
        if let profileName, !MessageContent.isProfileName(profileName) {
            throw Failure.invalid("profile name must be at most \(ContentLimits.maxProfileNameBytes) bytes without control characters")
        }
        let identity = try await unusedInboxes.consume()  // already stored in the keystore
        let now = WallClock.nowMs()
        let conversationId = Hex.encode(SecureRandom.bytes(16))
        let me = MemberEntry(inboxId: identity.inboxId, publicKey: identity.publicKey.hex, endpoint: endpoint,
                             clientId: identity.clientId, profileName: profileName.flatMap { $0.isEmpty ? nil : $0 })
        try await database.write { conn in
            try InboxWriter.save(inboxId: identity.inboxId, clientId: identity.clientId, now: now, on: conn)
            try InboxWriter.createConversation(
                NewConversation(id: conversationId, inboxId: identity.inboxId, name: name,
                                creatorInboxId: identity.inboxId, state: .active, createdAt: now, members: [me]),
                on: conn)
            try InboxWriter.touch(inboxId: identity.inboxId, at: now, on: conn)
        }
        _ = try await inboxLRU.wake(identity.inboxId, reason: .userInteraction)
        return try conversation(conversationId)
    }

    public func conversation(_ reference: String) throws -> DBConversation {
        let resolved = try database.read { conn in try ConversationLookupRepository.resolve(reference: reference, on: conn) }
        switch resolved {
        case .one(let conversation): return conversation
        case .none: throw Failure.notFound(reference)
        case .ambiguous: throw Failure.ambiguous(reference)
        }
    }

    public func listConversations() async throws -> [ConversationSummary] {
        let conversations = try database.read { conn in try ConversationLookupRepository.all(on: conn) }
        var out: [ConversationSummary] = []
        for conversation in conversations {
            let awake = await inboxLRU.state(of: conversation.inboxId) == .awake
            let (state, members, last, senderName) = try database.read { conn in
                // Only an awake inbox's key is held: reading an asleep one's text would
                // bring its key back into memory (docs/adr/0052, 0064).
                let last = awake ? try MessageRowRepository.page(conversationId: conversation.id, before: nil, limit: 1, on: conn).first : nil
                return (try LocalStateRepository.state(of: conversation.id, on: conn),
                        try MemberRepository.members(of: conversation.id, on: conn), last,
                        try last.flatMap { try MemberNamesRepository.profileName(conversationId: conversation.id, inboxId: $0.senderInboxId, on: conn) })
            }
            let lastMessage = last.map(TimelineMessage.init)
            out.append(ConversationSummary(conversation: conversation, unread: state?.unreadCount ?? 0,
                                           muted: state?.muted ?? false, memberCount: members.count,
                                           awake: awake, lastMessage: lastMessage, lastMessageSenderName: senderName))
        }
        return out
    }

    /// The latest `limit` messages, oldest first, from the in-memory store (the inbox is
    /// woken for it), or from the database when they reach past what the store keeps
    /// (`ConversationWindow.cap`); marks them read. With the senders' profile names and, for
    /// outgoing messages, where each member's push is.
    /// With `before` (a message id or unique prefix): the `limit` messages just older than it,
    /// from the database, and nothing marked read (a client paging back through history).
    public func readMessages(_ reference: String, limit: Int, before: String? = nil) async throws -> MessagePage {
        let conversation = try conversation(reference)
        _ = try await inboxLRU.wake(conversation.inboxId, reason: .userInteraction)
        if let before {
            let anchorId = try resolveMessage(before, in: conversation.id)
            let page: [TimelineMessage] = try database.read { conn in
                guard let anchor = try MessageRowRepository.find(id: anchorId, on: conn) else { return [] }
                let cursor = MessageRowRepository.Cursor(sentAt: anchor.sentAt, id: anchor.id)
                return try MessageRowRepository.page(conversationId: conversation.id, before: cursor, limit: limit, on: conn)
                    .reversed().map(TimelineMessage.init)
            }
            return try annotated(page, in: conversation.id)
        }
        guard let store = await windows.window(for: conversation.id) else { return MessagePage(messages: []) }
        var messages = await store.messages.suffix(max(0, limit))
        if messages.count < limit, messages.count >= store.cap {
            messages = try database.read { conn in
                try MessageRowRepository.page(conversationId: conversation.id, before: nil, limit: limit, on: conn)
            }.reversed().map(TimelineMessage.init)[...]
        }
        if !messages.isEmpty {
            do {
                _ = try await database.write { conn in
                    try LocalStateWriter.markRead(conversationId: conversation.id, at: WallClock.nowMs(), on: conn)
                }
            } catch {
                // Reading must work when writing cannot (a full disk): the read mark is
                // written again on the next read.
                DaemonLog.warning("read receipt for conversation \(conversation.id.prefix(12)) not saved: \(error)")
            }
        }
        return try annotated(Array(messages), in: conversation.id)
    }

    /// A page with its senders' profile names and its outgoing messages' pushes.
    private func annotated(_ messages: [TimelineMessage], in conversationId: String) throws -> MessagePage {
        let outgoing = messages.filter(\.isOutgoing).map(\.id)
        return try database.read { conn in
            MessagePage(messages: messages,
                        senderNames: messages.isEmpty ? [:] : try MemberNamesRepository.profileNames(of: conversationId, on: conn),
                        deliveries: outgoing.isEmpty ? [:] : try OutboxRepository.deliveries(messageIds: outgoing, on: conn))
        }
    }

    /// The clientId of an inbox's identity, for an error message that names it.
    public nonisolated func clientId(ofInbox inboxId: String) -> String? {
        (try? database.read { conn in try InboxRepository.find(inboxId: inboxId, on: conn)?.clientId }) ?? nil
    }

    /// Signs once, seals per member (by reference when it does not fit one push:
    /// docs/protocol/bodies.md), stores the message with its outbox rows (and its body) in one
    /// transaction, and wakes the outbox sender. A text is at most `ContentLimits.maxTextBytes`. The conversation store gets the message
    /// from the change feed, like every other change.
    public func send(to reference: String, text: String, replyTo: String?) async throws -> (messageId: String, recipients: Int) {
        guard !text.isEmpty, text.utf8.count <= ContentLimits.maxTextBytes else {
            throw Failure.invalid("a text is 1 to \(ContentLimits.maxTextBytes) bytes of UTF-8; this one is \(text.utf8.count)")
        }
        let conversation = try conversation(reference)
        let contentType: String
        let content: [UInt8]
        var referenceId: String?
        if let replyTo {
            let target = try resolveMessage(replyTo, in: conversation.id)
            referenceId = target
            contentType = ContentType.reply
            content = JSONWriter.bytes(["reference": .string(target), "text": .string(text)])
        } else {
            contentType = ContentType.text
            content = Array(text.utf8)
        }
        return try await sendContent(conversation, contentType: contentType, content: content,
                                     fallback: replyTo == nil ? nil : text, referenceId: referenceId)
    }

    /// A reaction (`xmtp.org/reaction:1.0`) to a message, added or removed.
    public func react(in reference: String, to message: String, emoji: String, remove: Bool) async throws -> (messageId: String, recipients: Int) {
        guard !emoji.isEmpty, emoji.utf8.count <= 64 else { throw Failure.invalid("the reaction must be 1 to 64 bytes") }
        let conversation = try conversation(reference)
        let target = try resolveMessage(message, in: conversation.id)
        let action = remove ? ReactionAction.removed : .added
        let content = JSONWriter.bytes(["reference": .string(target), "action": .string(action.rawValue),
                                        "content": .string(emoji)])
        return try await sendContent(conversation, contentType: ContentType.reaction, content: content,
                                     fallback: remove ? "removed \(emoji)" : "reacted \(emoji)", referenceId: target)
    }

    /// `id` is the new message's id (`sendAttachment` names the stored file by it first).
    /// `alsoInTransaction` runs in the transaction that stores the message and its pushes
    /// (an explosion records its time there: ADR 0016).
    func sendContent(_ conversation: DBConversation, contentType: String, content: [UInt8], fallback: String?,
                     referenceId: String?, id: String = Hex.encode(SecureRandom.bytes(16)),
                     alsoInTransaction: (@Sendable (SQLiteConnection) throws -> Void)? = nil) async throws
        -> (messageId: String, recipients: Int) {
        if let expiresAt = conversation.expiresAt, expiresAt <= WallClock.nowMs() {
            throw Failure.refused("the conversation has exploded")
        }
        guard conversation.state == .active else { throw Failure.refused("the conversation is waiting for its creator to accept the join") }
        let identity = try await identities.identity(of: conversation.inboxId)
        let members = try database.read { conn in try MemberRepository.members(of: conversation.id, on: conn) }
        let now = WallClock.nowMs()
        let composed: MessageComposer.Composed
        do {
            composed = try MessageComposer.compose(contentType: contentType, content: content, fallback: fallback,
                                                   referenceId: referenceId, conversation: conversation,
                                                   members: members, sender: identity, now: now, id: id)
        } catch {
            // Refused here, with nothing stored: never a message every member fails to get.
            throw Failure.invalid(error.description)
        }
        CrashPoint.reach("send.composed")
        try await database.write { conn in
            try composed.insert(now: now, on: conn)
            try InboxWriter.touch(inboxId: conversation.inboxId, at: now, on: conn)
            try alsoInTransaction?(conn)
        }
        CrashPoint.reach("send.committed")
        // The message enters the conversation store once, through the change feed (the
        // commit signalled it; the control request awaits the catch-up: docs/adr/0022).
        await inboxLRU.recordActivity(conversation.inboxId, at: now)
        await outbox.kick()
        return (composed.outgoing.id, composed.pushes.count)
    }

    /// Reads, and with `set` changes, what notifications show: for the device when
    /// `conversation` is nil (`.some(nil)`, "default", means `full` there), else for that
    /// conversation (`.some(nil)`: it follows the device again).
    public func notificationPreview(conversation reference: String?, set: NotificationPreview??) async throws -> NotificationPreviewChoice {
        guard let reference else {
            if let set {
                try await database.write { conn in try DeviceSettings.setNotificationPreview(set ?? .deviceDefault, on: conn) }
            }
            let device = try database.read { conn in try DeviceSettings.notificationPreview(on: conn) }
            return NotificationPreviewChoice(device: device, conversationId: nil, conversation: nil)
        }
        let conversation = try conversation(reference)
        if let set {
            _ = try await database.write { conn in
                try LocalStateWriter.setNotificationPreview(set, conversationId: conversation.id, on: conn)
            }
        }
        let (device, own) = try database.read { conn in
            (try DeviceSettings.notificationPreview(on: conn),
             try DeviceSettings.conversationPreview(conversationId: conversation.id, on: conn))
        }
        return NotificationPreviewChoice(device: device, conversationId: conversation.id, conversation: own)
    }

    public func markRead(_ reference: String) async throws {
        let conversation = try conversation(reference)
        _ = try await database.write { conn in
            try LocalStateWriter.markRead(conversationId: conversation.id, at: WallClock.nowMs(), on: conn)
        }
    }

    /// Sets the conversation's `muted` flag (this device only; the worker then posts no
    /// desktop notification for it). Returns the conversation's full id.
    public func setMuted(_ reference: String, _ muted: Bool) async throws -> String {
        let conversation = try conversation(reference)
        _ = try await database.write { conn in
            try LocalStateWriter.setMuted(muted, conversationId: conversation.id, on: conn)
        }
        return conversation.id
    }

    /// Whether this device sends delivery receipts for the conversation, after setting it
    /// when `set` is given (docs/protocol/receipts.md).
    public func receipts(_ reference: String, set: Bool?) async throws -> (conversationId: String, enabled: Bool) {
        let conversation = try conversation(reference)
        let conversationId = conversation.id
        if let set {
            _ = try await database.write { conn in
                try ReceiptDueWriter.setEnabled(set, conversationId: conversationId, on: conn)
            }
        }
        return (conversationId, try database.read { conn in try ReceiptDueRepository.isEnabled(conversationId: conversationId, on: conn) })
    }

    /// A message id or a unique prefix of one, within a conversation.
    func resolveMessage(_ reference: String, in conversationId: String) throws -> String {
        guard !reference.isEmpty, reference.utf8.count <= 32, reference.utf8.allSatisfy(Hex.isDigit) else {
            throw Failure.invalid("'\(reference)' is not a message id")
        }
        let ids = try database.read { conn in
            try MessageIdRepository.ids(conversationId: conversationId, prefix: reference.lowercased(), limit: 2, on: conn)
        }
        guard ids.count == 1 else {
            throw ids.isEmpty ? Failure.invalid("no message '\(reference)' in this conversation")
                              : Failure.invalid("'\(reference)' matches more than one message")
        }
        return ids[0]
    }
}

/// The "Inbox Lifecycle Management" ranking from the database's index, for the inbox LRU,
/// without the inboxes whose identity does not open (`excluding`, by clientId).
public struct DatabaseActivitySource: InboxActivitySource {
    let database: DaemonDatabase
    let excluded: Set<String>

    public init(database: DaemonDatabase, excluding clientIds: Set<String> = []) {
        self.database = database
        self.excluded = clientIds
    }

    public func rankedInboxes(limit: Int) async throws -> [InboxActivity] {
        try database.read { conn in try InboxRankingRepository.rankedByActivity(limit: limit, on: conn) }
            .filter { !excluded.contains($0.clientId) }
            .map { InboxActivity(inboxId: $0.inboxId, lastActivityMs: $0.lastActivityAt ?? 0) }
    }
}

/// What `sotto read` shows: the messages, their senders' profile names (by inboxId) and the
/// outgoing messages' pushes (by messageId).
///
/// ```swift
/// let page = try await service.readMessages("c1", limit: 20)
/// page.senderNames[page.messages[0].senderInboxId]
/// ```
public struct MessagePage: Sendable {
    public var messages: [TimelineMessage]
    public var senderNames: [String: String] = [:]
    public var deliveries: [String: [OutboxRepository.MemberDelivery]] = [:]
}

/// One row of `sotto ls`.
public struct ConversationSummary: Sendable {
    public let conversation: DBConversation
    public let unread: Int64
    public let muted: Bool
    public let memberCount: Int
    public let awake: Bool
    /// Its latest message, read only while its inbox is awake.
    public var lastMessage: TimelineMessage? = nil
    public var lastMessageSenderName: String? = nil
}
