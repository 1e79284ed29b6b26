import SottoWire

// MARK: - listConversations

/// `listConversations`: every conversation, most recently active first (`sotto ls`).
///
/// ```swift
/// for conversation in try client.call(ListConversationsParams()).conversations { print(conversation.id) }
/// ```
public struct ListConversationsParams: ControlRequest {
    public typealias Result = ConversationList
    public static var method: ControlMethodName { .listConversations }
    public static var summary: String { "Every conversation, most recently active first." }
    public static var schemaName: String { "ListConversationsParams" }
    public static var fields: [WireField] { [] }

    public init() {}
    public init(json: JSONValue) throws(WireError) { _ = try WireFields(json) }
    public var json: JSONValue { .object(JSONObject()) }
}

/// The result of `listConversations`.
///
/// ```swift
/// list.conversations.first?.unread
/// ```
public struct ConversationList: WireCodable {
    public var conversations: [ConversationInfo]
    /// Joins the creator refused, until the user dismisses them (docs/protocol/join-refusal.md).
    public var refusedJoins: [RefusedJoinInfo]

    public init(conversations: [ConversationInfo], refusedJoins: [RefusedJoinInfo] = []) {
        self.conversations = conversations
        self.refusedJoins = refusedJoins
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversations: try fields.array("conversations"),
                  refusedJoins: try fields.optionalArray("refusedJoins") ?? [])
    }

    public var json: JSONValue { ["conversations": .list(conversations), "refusedJoins": .list(refusedJoins)] }

    public static var schemaName: String { "ConversationList" }
    public static var fields: [WireField] {
        [WireField("conversations", .array(ConversationInfo.self), "most recently active first"),
         WireField("refusedJoins", .array(RefusedJoinInfo.self), optional: true,
                   "joins the creator refused, newest first, until dismissed (absent: none)")]
    }
}

/// A join the creator refused (docs/protocol/join-refusal.md): its pending conversation and
/// identity are deleted; this entry stays until the user dismisses it (`sotto dismiss`).
///
/// ```swift
/// "\(refused.id.prefix(12))  refused: \(refused.reasonText)"   // "3fa2…  refused: the invite was revoked"
/// ```
public struct RefusedJoinInfo: WireCodable {
    /// The closed set of docs/protocol/join-refusal.md §3, or `other`.
    public static let reasons = ["full", "revoked", "used_up", "expired", "bad_secret", "unknown_invite", "other"]

    public var id: String
    public var reason: String
    public var reasonText: String
    public var askedAtMs: Int64
    public var refusedAtMs: Int64

    public init(id: String, reason: String, reasonText: String, askedAtMs: Int64, refusedAtMs: Int64) {
        self.id = id
        self.reason = reason
        self.reasonText = reasonText
        self.askedAtMs = askedAtMs
        self.refusedAtMs = refusedAtMs
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(id: try fields.string("id"), reason: try fields.string("reason"), reasonText: try fields.string("reasonText"),
                  askedAtMs: try fields.int("askedAtMs"), refusedAtMs: try fields.int("refusedAtMs"))
    }

    public var json: JSONValue {
        ["id": .string(id), "reason": .string(reason), "reasonText": .string(reasonText),
         "askedAtMs": .int(askedAtMs), "refusedAtMs": .int(refusedAtMs)]
    }

    public static var schemaName: String { "RefusedJoinInfo" }
    public static var fields: [WireField] {
        [
            WireField("id", .string, "the conversation id the join asked for"),
            WireField("reason", .string, "full, revoked, used_up, expired, bad_secret, unknown_invite or other"),
            WireField("reasonText", .string, "the reason in words"),
            WireField("askedAtMs", .integer, "when this device asked to join"),
            WireField("refusedAtMs", .integer, "when the refusal arrived"),
        ]
    }
}

/// One conversation as `sotto ls` shows it.
///
/// ```swift
/// "\(summary.name ?? "(unnamed)") unread \(summary.unread)"
/// ```
public struct ConversationInfo: WireCodable {
    public var id: String
    public var state: String
    public var inboxId: String
    public var unread: Int64
    public var members: Int
    public var awake: Bool
    public var isCreator: Bool
    public var name: String?
    public var expiresAtMs: Int64?
    /// Muted on this device (`sotto mute`): no desktop notifications.
    public var muted: Bool
    /// The latest message, for a conversation list's preview line.
    public var lastMessage: MessageInfo?

    public init(id: String, state: String, inboxId: String, unread: Int64, members: Int, awake: Bool, isCreator: Bool,
                name: String? = nil, expiresAtMs: Int64? = nil, muted: Bool = false, lastMessage: MessageInfo? = nil) {
        self.id = id
        self.state = state
        self.inboxId = inboxId
        self.unread = unread
        self.members = members
        self.awake = awake
        self.isCreator = isCreator
        self.name = name
        self.expiresAtMs = expiresAtMs
        self.muted = muted
        self.lastMessage = lastMessage
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(id: try fields.string("id"), state: try fields.string("state"), inboxId: try fields.string("inboxId"),
                  unread: try fields.int("unread", minimum: 0), members: try fields.count("members"), awake: try fields.bool("awake"),
                  isCreator: try fields.bool("isCreator"), name: try fields.optionalString("name"),
                  expiresAtMs: try fields.optionalInt("expiresAtMs"), muted: try fields.optionalBool("muted") ?? false,
                  lastMessage: try fields.optionalDecode("lastMessage"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["id"] = .string(id)
        out["state"] = .string(state)
        out["inboxId"] = .string(inboxId)
        out["unread"] = .int(unread)
        out["members"] = .int(Int64(members))
        out["awake"] = .bool(awake)
        out["isCreator"] = .bool(isCreator)
        out["name"] = name.map(JSONValue.string)
        out["expiresAtMs"] = expiresAtMs.map(JSONValue.int)
        out["muted"] = .bool(muted)
        out["lastMessage"] = lastMessage?.json
        return out.json
    }

    public static var schemaName: String { "ConversationInfo" }
    public static var fields: [WireField] {
        [
            WireField("id", .string, "the conversation id"),
            WireField("state", .string, "pending (a join not yet accepted), active, or exploded"),
            WireField("inboxId", .string, "this device's inbox (identity) in it"),
            WireField("unread", .integer(minimum: 0), "unread messages"),
            WireField("members", .integer(minimum: 0), "members, this device included"),
            WireField("awake", .boolean, "whether its inbox is awake"),
            WireField("isCreator", .boolean, "whether this device created it (and may explode it)"),
            WireField("name", .string, optional: true, "its name, when it has one"),
            WireField("expiresAtMs", .integer, optional: true, "when it explodes, when scheduled"),
            WireField("muted", .boolean, optional: true, "muted on this device: no desktop notifications (absent: false)"),
            WireField("lastMessage", .object(MessageInfo.self), optional: true, "its latest message, when it has one"),
        ]
    }
}

// MARK: - newConversation

/// `newConversation`: a conversation with a fresh identity of its own (`sotto new`).
///
/// ```swift
/// let created = try client.call(NewConversationParams(name: "Trip"))
/// created.conversationId
/// ```
public struct NewConversationParams: ControlRequest {
    public typealias Result = NewConversationResult
    public static var method: ControlMethodName { .newConversation }
    public static var summary: String { "Create a conversation, with a fresh identity of its own." }
    public static var schemaName: String { "NewConversationParams" }
    public static var fields: [WireField] {
        [
            WireField("name", .string, optional: true, "the conversation's name"),
            WireField("profileName", .string, optional: true, "the name the members see (default: the daemon user's login name)"),
        ]
    }

    public var name: String?
    public var profileName: String?

    public init(name: String? = nil, profileName: String? = nil) {
        self.name = name
        self.profileName = profileName
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(name: try fields.optionalString("name"), profileName: try fields.optionalString("profileName"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["name"] = name.map(JSONValue.string)
        out["profileName"] = profileName.map(JSONValue.string)
        return out.json
    }
}

/// The result of `newConversation`.
///
/// ```swift
/// print("created conversation \(created.conversationId)")
/// ```
public struct NewConversationResult: WireCodable {
    public var conversationId: String
    public var inboxId: String
    public var topic: String

    public init(conversationId: String, inboxId: String, topic: String) {
        self.conversationId = conversationId
        self.inboxId = inboxId
        self.topic = topic
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversationId: try fields.string("conversationId"), inboxId: try fields.string("inboxId"),
                  topic: try fields.string("topic"))
    }

    public var json: JSONValue {
        ["conversationId": .string(conversationId), "inboxId": .string(inboxId), "topic": .string(topic)]
    }

    public static var schemaName: String { "NewConversationResult" }
    public static var fields: [WireField] {
        [
            WireField("conversationId", .string, "the new conversation's id"),
            WireField("inboxId", .string, "its inbox (identity) on this device"),
            WireField("topic", .string, "its topic"),
        ]
    }
}

// MARK: - markRead

/// `markRead`: marks a conversation's messages read. Returns `{}`.
///
/// ```swift
/// _ = try client.call(MarkReadParams(conversation: "ab12"))
/// ```
public struct MarkReadParams: ControlRequest {
    public typealias Result = EmptyObject
    public static var method: ControlMethodName { .markRead }
    public static var summary: String { "Mark a conversation's messages read." }
    public static var errors: [RPCErrorCode] { [.notFound] }
    public static var schemaName: String { "MarkReadParams" }
    public static var fields: [WireField] {
        [WireField("conversation", .nonEmptyString, "conversation id, or a unique prefix of it")]
    }

    public var conversation: String

    public init(conversation: String) { self.conversation = conversation }
    public init(json: JSONValue) throws(WireError) { conversation = try WireFields(json).nonEmptyString("conversation") }
    public var json: JSONValue { ["conversation": .string(conversation)] }
}

// MARK: - createInvite

/// `createInvite`: a signed invite code for a conversation this device created (`sotto invite`).
///
/// ```swift
/// let invite = try client.call(CreateInviteParams(conversation: "ab12", expiresInMs: 3_600_000))
/// print(invite.code)
/// ```
public struct CreateInviteParams: ControlRequest {
    public typealias Result = InviteResult
    public static var method: ControlMethodName { .createInvite }
    public static var summary: String { "An invite code for a conversation this device created." }
    public static var errors: [RPCErrorCode] { [.notFound, .refused] }
    public static var schemaName: String { "CreateInviteParams" }
    public static var fields: [WireField] {
        [
            WireField("conversation", .nonEmptyString, "conversation id, or a unique prefix of it"),
            WireField("expiresInMs", .integer, optional: true, "how long the invite stays valid (default: no expiry)"),
            WireField("singleUse", .boolean, optional: true, "accept at most one join with it (default: false)"),
        ]
    }

    public var conversation: String
    public var expiresInMs: Int64?
    public var singleUse: Bool

    public init(conversation: String, expiresInMs: Int64? = nil, singleUse: Bool = false) {
        self.conversation = conversation
        self.expiresInMs = expiresInMs
        self.singleUse = singleUse
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversation: try fields.nonEmptyString("conversation"), expiresInMs: try fields.optionalInt("expiresInMs"),
                  singleUse: try fields.optionalBool("singleUse") ?? false)
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["conversation"] = .string(conversation)
        out["expiresInMs"] = expiresInMs.map(JSONValue.int)
        if singleUse { out["singleUse"] = .bool(true) }
        return out.json
    }
}

// MARK: - revokeInvite

/// `revokeInvite`: a join request decided after this is refused, whenever it was sent
/// (`sotto revoke`); creator only.
///
/// ```swift
/// let revoked = try client.call(RevokeInviteParams(conversation: "ab12", invite: "9f3e"))
/// revoked.inviteId   // the whole id; revoked.revokedNow is false when it already was
/// ```
public struct RevokeInviteParams: ControlRequest {
    public typealias Result = RevokedInvite
    public static var method: ControlMethodName { .revokeInvite }
    public static var summary: String { "Revoke an invite of a conversation this device created." }
    public static var errors: [RPCErrorCode] { [.notFound, .refused] }
    public static var schemaName: String { "RevokeInviteParams" }
    public static var fields: [WireField] {
        [
            WireField("conversation", .nonEmptyString, "conversation id, or a unique prefix of it"),
            WireField("invite", .nonEmptyString, "the invite's id, a unique prefix of it, or the invite code (sotto1:…)"),
        ]
    }

    public var conversation: String
    public var invite: String

    public init(conversation: String, invite: String) {
        self.conversation = conversation
        self.invite = invite
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversation: try fields.nonEmptyString("conversation"), invite: try fields.nonEmptyString("invite"))
    }

    public var json: JSONValue { ["conversation": .string(conversation), "invite": .string(invite)] }
}

/// The result of `revokeInvite`.
///
/// ```swift
/// revoked.revokedNow   // false: it had been revoked before
/// ```
public struct RevokedInvite: WireCodable {
    public var inviteId: String
    public var revokedNow: Bool

    public init(inviteId: String, revokedNow: Bool) {
        self.inviteId = inviteId
        self.revokedNow = revokedNow
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(inviteId: try fields.string("inviteId"), revokedNow: try fields.bool("revokedNow"))
    }

    public var json: JSONValue { ["inviteId": .string(inviteId), "revokedNow": .bool(revokedNow)] }

    public static var schemaName: String { "RevokedInvite" }
    public static var fields: [WireField] {
        [
            WireField("inviteId", .string, "the revoked invite's id"),
            WireField("revokedNow", .boolean, "false when it had been revoked before"),
        ]
    }
}

/// The result of `createInvite`.
///
/// ```swift
/// invite.code   // "sotto1:…"
/// ```
public struct InviteResult: WireCodable {
    public var code: String
    public var inviteId: String
    public var expiresAtMs: Int64?

    public init(code: String, inviteId: String, expiresAtMs: Int64? = nil) {
        self.code = code
        self.inviteId = inviteId
        self.expiresAtMs = expiresAtMs
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(code: try fields.string("code"), inviteId: try fields.string("inviteId"),
                  expiresAtMs: try fields.optionalInt("expiresAtMs"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["code"] = .string(code)
        out["inviteId"] = .string(inviteId)
        out["expiresAtMs"] = expiresAtMs.map(JSONValue.int)
        return out.json
    }

    public static var schemaName: String { "InviteResult" }
    public static var fields: [WireField] {
        [
            WireField("code", .string, "the invite code (sotto1:…)"),
            WireField("inviteId", .string, "the invite's id"),
            WireField("expiresAtMs", .integer, optional: true, "when it stops being valid, if it does"),
        ]
    }
}

// MARK: - joinConversation

/// `joinConversation`: asks to join with an invite code (`sotto join`); the conversation
/// stays pending until its creator's daemon accepts.
///
/// ```swift
/// let joined = try client.call(JoinConversationParams(code: "sotto1:…"))
/// joined.state   // "pending"
/// ```
public struct JoinConversationParams: ControlRequest {
    public typealias Result = JoinResult
    public static var method: ControlMethodName { .joinConversation }
    public static var summary: String { "Ask to join a conversation with an invite code." }
    public static var errors: [RPCErrorCode] { [.refused] }
    public static var schemaName: String { "JoinConversationParams" }
    public static var fields: [WireField] {
        [
            WireField("code", .nonEmptyString, "the invite code (sotto1:…)"),
            WireField("profileName", .string, optional: true, "the name the members see (default: the daemon user's login name)"),
        ]
    }

    public var code: String
    public var profileName: String?

    public init(code: String, profileName: String? = nil) {
        self.code = code
        self.profileName = profileName
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(code: try fields.nonEmptyString("code"), profileName: try fields.optionalString("profileName"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["code"] = .string(code)
        out["profileName"] = profileName.map(JSONValue.string)
        return out.json
    }
}

/// The result of `joinConversation`.
///
/// ```swift
/// print("asked to join \(joined.conversationId) (\(joined.state))")
/// ```
public struct JoinResult: WireCodable {
    public var conversationId: String
    public var state: String
    public var inboxId: String
    public var name: String?

    public init(conversationId: String, state: String, inboxId: String, name: String? = nil) {
        self.conversationId = conversationId
        self.state = state
        self.inboxId = inboxId
        self.name = name
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversationId: try fields.string("conversationId"), state: try fields.string("state"),
                  inboxId: try fields.string("inboxId"), name: try fields.optionalString("name"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["conversationId"] = .string(conversationId)
        out["state"] = .string(state)
        out["inboxId"] = .string(inboxId)
        out["name"] = name.map(JSONValue.string)
        return out.json
    }

    public static var schemaName: String { "JoinResult" }
    public static var fields: [WireField] {
        [
            WireField("conversationId", .string, "the conversation's id"),
            WireField("state", .string, "pending until the creator's daemon accepts"),
            WireField("inboxId", .string, "this device's new inbox (identity) in it"),
            WireField("name", .string, optional: true, "the conversation's name, when the invite carries one"),
        ]
    }
}

// MARK: - explode

/// `explode`: deletes a conversation on every member's device, now or at `atMs` (creator only).
/// Run again on a scheduled explosion it changes it (a later or earlier `atMs`, or now), and
/// with `cancel` it calls it off; every device follows the creator's latest decision
/// (docs/protocol/explode-schedule.md).
///
/// ```swift
/// let exploded = try client.call(ExplodeParams(conversation: "ab12"))
/// exploded.deleted   // true: gone here too
/// let called = try client.call(ExplodeParams(conversation: "ab12", cancel: true))
/// called.expiresAtMs // nil: nothing scheduled any more
/// ```
public struct ExplodeParams: ControlRequest {
    public typealias Result = ExplodeResult
    public static var method: ControlMethodName { .explode }
    public static var summary: String {
        "Explode a conversation this device created: every device deletes it, now or at atMs; again to change the time, or cancel it."
    }
    public static var errors: [RPCErrorCode] { [.notFound, .refused] }
    public static var schemaName: String { "ExplodeParams" }
    public static var fields: [WireField] {
        [
            WireField("conversation", .nonEmptyString, "conversation id, or a unique prefix of it"),
            WireField("atMs", .integer, optional: true,
                      "when every device deletes it (default: now); replaces a time set before; at most ten years ahead, at most 1 s ago"),
            WireField("cancel", .boolean, optional: true,
                      "true: call off the scheduled explosion (refused when none is scheduled; not with atMs)"),
        ]
    }

    public var conversation: String
    public var atMs: Int64?
    public var cancel: Bool

    public init(conversation: String, atMs: Int64? = nil, cancel: Bool = false) {
        self.conversation = conversation
        self.atMs = atMs
        self.cancel = cancel
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversation: try fields.nonEmptyString("conversation"), atMs: try fields.optionalInt("atMs"),
                  cancel: try fields.optionalBool("cancel") ?? false)
        if cancel && atMs != nil { throw WireError("give 'atMs' or 'cancel', not both") }
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["conversation"] = .string(conversation)
        out["atMs"] = atMs.map(JSONValue.int)
        out["cancel"] = cancel ? .bool(true) : nil
        return out.json
    }
}

/// The result of `explode`.
///
/// ```swift
/// "told \(exploded.delivered) member(s), \(exploded.undelivered) unreachable"
/// ```
public struct ExplodeResult: WireCodable {
    public var conversationId: String
    /// When every device deletes it; nil when this call cancelled the explosion.
    public var expiresAtMs: Int64?
    /// The creator's sequence number of this decision (1 for the first).
    public var sequence: Int64
    public var deleted: Bool
    public var delivered: Int
    public var undelivered: Int

    public init(conversationId: String, expiresAtMs: Int64?, sequence: Int64, deleted: Bool, delivered: Int, undelivered: Int) {
        self.conversationId = conversationId
        self.expiresAtMs = expiresAtMs
        self.sequence = sequence
        self.deleted = deleted
        self.delivered = delivered
        self.undelivered = undelivered
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversationId: try fields.string("conversationId"), expiresAtMs: try fields.optionalInt("expiresAtMs"),
                  sequence: try fields.int("sequence", minimum: 1),
                  deleted: try fields.bool("deleted"), delivered: try fields.count("delivered"),
                  undelivered: try fields.count("undelivered"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["conversationId"] = .string(conversationId)
        out["expiresAtMs"] = expiresAtMs.map(JSONValue.int)
        out["sequence"] = .int(sequence)
        out["deleted"] = .bool(deleted)
        out["delivered"] = .int(Int64(delivered))
        out["undelivered"] = .int(Int64(undelivered))
        return out.json
    }

    public static var schemaName: String { "ExplodeResult" }
    public static var fields: [WireField] {
        [
            WireField("conversationId", .string, "the conversation's id"),
            WireField("expiresAtMs", .integer, optional: true, "when every device deletes it; absent when cancelled"),
            WireField("sequence", .integer(minimum: 1), "the creator's sequence number of this decision"),
            WireField("deleted", .boolean, "whether it is already deleted here (an explosion now)"),
            WireField("delivered", .integer(minimum: 0), "members the explode message reached"),
            WireField("undelivered", .integer(minimum: 0), "members it has not reached (yet)"),
        ]
    }
}
