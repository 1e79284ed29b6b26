import SottoWire

// MARK: - readMessages

/// `readMessages`: a conversation's latest messages, oldest first (`sotto read`); with
/// `before`, the page of older messages just before that one (history paged on demand).
///
/// ```swift
/// let read = try client.call(ReadMessagesParams(conversation: "ab12", limit: 20))
/// let older = try client.call(ReadMessagesParams(conversation: "ab12", limit: 20, before: read.messages[0].id))
/// ```
public struct ReadMessagesParams: ControlRequest {
    public typealias Result = MessageList
    public static var method: ControlMethodName { .readMessages }
    public static var summary: String { "A conversation's latest messages, oldest first, with delivery status." }
    public static var errors: [RPCErrorCode] { [.notFound] }
    public static var schemaName: String { "ReadMessagesParams" }
    /// The most messages one call returns.
    public static let limits: ClosedRange<Int64> = 1...10_000
    public static let defaultLimit = 50
    public static var fields: [WireField] {
        [
            WireField("conversation", .nonEmptyString, "conversation id, or a unique prefix of it"),
            WireField("limit", .integer(minimum: limits.lowerBound, maximum: limits.upperBound), optional: true,
                      "how many of the latest messages (default 50)"),
            WireField("before", .string, optional: true,
                      "a message id: the page of messages just older than it, read from the database, and nothing marked read "
                      + "(default: the latest, marked read)"),
        ]
    }

    public var conversation: String
    public var limit: Int
    public var before: String?

    public init(conversation: String, limit: Int = ReadMessagesParams.defaultLimit, before: String? = nil) {
        self.conversation = conversation
        self.limit = limit
        self.before = before
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        let conversation = try fields.nonEmptyString("conversation")
        let limit = try fields.optionalInt("limit") ?? Int64(Self.defaultLimit)
        guard Self.limits.contains(limit) else { throw WireError("'limit' must be 1…10000") }
        self.init(conversation: conversation, limit: Int(limit), before: try fields.optionalString("before"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["conversation"] = .string(conversation)
        out["limit"] = .int(Int64(limit))
        out["before"] = before.map(JSONValue.string)
        return out.json
    }
}

/// The result of `readMessages`.
///
/// ```swift
/// for message in read.messages { print(message.text) }
/// ```
public struct MessageList: WireCodable {
    public var messages: [MessageInfo]

    public init(messages: [MessageInfo]) { self.messages = messages }
    public init(json: JSONValue) throws(WireError) { messages = try WireFields(json).array("messages") }
    public var json: JSONValue { ["messages": .list(messages)] }

    public static var schemaName: String { "MessageList" }
    public static var fields: [WireField] { [WireField("messages", .array(MessageInfo.self), "oldest first")] }
}

/// One message as a client shows it: text decoded for display, never raw content bytes.
///
/// ```swift
/// message.outgoing ? "me" : (message.senderName ?? String(message.senderInboxId.prefix(8)))
/// ```
public struct MessageInfo: WireCodable {
    public var id: String
    public var conversationId: String
    public var senderInboxId: String
    public var sentAtMs: Int64
    public var contentType: String
    public var text: String
    public var outgoing: Bool
    public var deliveryStatus: String
    public var referenceId: String?
    public var senderName: String?
    /// Outgoing messages: where each member's push is (nil for incoming ones, and for
    /// outgoing ones that had nobody to go to).
    public var deliveries: [MessageDelivery]?
    /// A `sotto/attachment:1.0` message's file (docs/protocol/attachments.md).
    public var attachment: AttachmentInfo?

    public init(id: String, conversationId: String, senderInboxId: String, sentAtMs: Int64, contentType: String,
                text: String, outgoing: Bool, deliveryStatus: String, referenceId: String? = nil, senderName: String? = nil,
                deliveries: [MessageDelivery]? = nil, attachment: AttachmentInfo? = nil) {
        self.id = id
        self.conversationId = conversationId
        self.senderInboxId = senderInboxId
        self.sentAtMs = sentAtMs
        self.contentType = contentType
        self.text = text
        self.outgoing = outgoing
        self.deliveryStatus = deliveryStatus
        self.referenceId = referenceId
        self.senderName = senderName
        self.deliveries = deliveries
        self.attachment = attachment
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(id: try fields.string("id"), conversationId: try fields.string("conversationId"),
                  senderInboxId: try fields.string("senderInboxId"), sentAtMs: try fields.int("sentAtMs"),
                  contentType: try fields.string("contentType"), text: try fields.string("text"),
                  outgoing: try fields.bool("outgoing"), deliveryStatus: try fields.string("deliveryStatus"),
                  referenceId: try fields.optionalString("referenceId"), senderName: try fields.optionalString("senderName"),
                  deliveries: try fields.optionalArray("deliveries"), attachment: try fields.optionalDecode("attachment"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["id"] = .string(id)
        out["conversationId"] = .string(conversationId)
        out["senderInboxId"] = .string(senderInboxId)
        out["sentAtMs"] = .int(sentAtMs)
        out["contentType"] = .string(contentType)
        out["text"] = .string(text)
        out["outgoing"] = .bool(outgoing)
        out["deliveryStatus"] = .string(deliveryStatus)
        out["referenceId"] = referenceId.map(JSONValue.string)
        out["senderName"] = senderName.map(JSONValue.string)
        out["deliveries"] = deliveries.map(JSONValue.list)
        out["attachment"] = attachment?.json
        return out.json
    }

    public static var schemaName: String { "Message" }
    public static var fields: [WireField] {
        [
            WireField("id", .string, "the message id"),
            WireField("conversationId", .string, "its conversation"),
            WireField("senderInboxId", .string, "the sender's inbox id"),
            WireField("sentAtMs", .integer, "when it was sent (the sender's clock)"),
            WireField("contentType", .string, "its content type, e.g. text"),
            WireField("text", .string, "its text for display (a fallback or [type] for content that is not text)"),
            WireField("outgoing", .boolean, "whether this device sent it"),
            WireField("deliveryStatus", .string,
                      "outgoing: pending while a member's push waits, else failed if one failed, else relayed if one is "
                      + "on a relay, else sent if a device acked it without a receipt, else delivered (every member's "
                      + "device sent a delivery receipt); incoming: received"),
            WireField("referenceId", .string, optional: true, "the message it replies or reacts to"),
            WireField("senderName", .string, optional: true, "the sender's profile name, for incoming messages when known"),
            WireField("deliveries", .array(MessageDelivery.self), optional: true,
                      "outgoing messages: each member's push, in member inbox id order"),
            WireField("attachment", .object(AttachmentInfo.self), optional: true,
                      "a file (contentType sotto/attachment:1.0): its name, size, media type, state and caption"),
        ]
    }
}

/// Where one member's push of an outgoing message is (docs/adr/0028): `pending` (not
/// delivered yet, retried with backoff), `relayed` (stored by the member's relay, which hands
/// it to the device when it is online), `sent` (acked by the member's device), `delivered`
/// (the member's device said it stored it, in a delivery receipt: docs/protocol/receipts.md),
/// `failed` (`lastError` says why, e.g. `body_missing (reported by the member's device)`).
///
/// ```swift
/// for delivery in message.deliveries ?? [] { print(delivery.member.prefix(8), delivery.state, delivery.lastError ?? "") }
/// ```
public struct MessageDelivery: WireCodable {
    public var member: String
    public var state: String
    public var attempts: Int64
    public var lastError: String?

    public init(member: String, state: String, attempts: Int64, lastError: String? = nil) {
        self.member = member
        self.state = state
        self.attempts = attempts
        self.lastError = lastError
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(member: try fields.string("member"), state: try fields.string("state"),
                  attempts: try fields.int("attempts", minimum: 0), lastError: try fields.optionalString("lastError"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["member"] = .string(member)
        out["state"] = .string(state)
        out["attempts"] = .int(attempts)
        out["lastError"] = lastError.map(JSONValue.string)
        return out.json
    }

    public static var schemaName: String { "MessageDelivery" }
    public static var fields: [WireField] {
        [
            WireField("member", .string, "the member's inbox id"),
            WireField("state", .string, "pending, relayed, sent, delivered (the member's device said so in a "
                      + "delivery receipt) or failed (lastError: why; from a receipt: the member's ack code)"),
            WireField("attempts", .integer(minimum: 0), "delivery attempts so far"),
            WireField("lastError", .string, optional: true, "why the last attempt did not deliver (pending or failed)"),
        ]
    }
}

// MARK: - sendMessage

/// `sendMessage`: signs once, seals for each member, delivers through the outbox (`sotto send`).
///
/// ```swift
/// let sent = try client.call(SendMessageParams(conversation: "ab12", text: "hello"))
/// print("sent \(sent.messageId) to \(sent.recipients) member(s)")
/// ```
public struct SendMessageParams: ControlRequest {
    public typealias Result = SentMessage
    public static var method: ControlMethodName { .sendMessage }
    public static var summary: String { "Send a text message to a conversation." }
    public static var errors: [RPCErrorCode] { [.notFound, .refused] }
    public static var schemaName: String { "SendMessageParams" }
    public static var fields: [WireField] {
        [
            WireField("conversation", .nonEmptyString, "conversation id, or a unique prefix of it"),
            WireField("text", .nonEmptyString, "the text: 1 to 65,536 bytes of UTF-8 (longer is invalidParams, nothing stored)"),
            WireField("replyTo", .string, optional: true, "the id (or a unique prefix) of the message this replies to"),
        ]
    }

    public var conversation: String
    public var text: String
    public var replyTo: String?

    public init(conversation: String, text: String, replyTo: String? = nil) {
        self.conversation = conversation
        self.text = text
        self.replyTo = replyTo
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversation: try fields.nonEmptyString("conversation"), text: try fields.nonEmptyString("text"),
                  replyTo: try fields.optionalString("replyTo"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["conversation"] = .string(conversation)
        out["text"] = .string(text)
        out["replyTo"] = replyTo.map(JSONValue.string)
        return out.json
    }
}

/// The result of `sendMessage` and `react`: the new message's id and how many members it goes to.
///
/// ```swift
/// sent.recipients   // 2
/// ```
public struct SentMessage: WireCodable {
    public var messageId: String
    public var recipients: Int

    public init(messageId: String, recipients: Int) {
        self.messageId = messageId
        self.recipients = recipients
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(messageId: try fields.string("messageId"), recipients: try fields.count("recipients"))
    }

    public var json: JSONValue { ["messageId": .string(messageId), "recipients": .int(Int64(recipients))] }

    public static var schemaName: String { "SentMessage" }
    public static var fields: [WireField] {
        [
            WireField("messageId", .string, "the new message's id"),
            WireField("recipients", .integer(minimum: 0), "members it is being delivered to"),
        ]
    }
}

// MARK: - react

/// `react`: adds (or with `remove` takes back) a reaction to a message (`sotto react`).
///
/// ```swift
/// _ = try client.call(ReactParams(conversation: "ab12", message: "9f3c", emoji: "👍"))
/// ```
public struct ReactParams: ControlRequest {
    public typealias Result = SentMessage
    public static var method: ControlMethodName { .react }
    public static var summary: String { "React to a message with an emoji, or take a reaction back." }
    public static var errors: [RPCErrorCode] { [.notFound, .refused] }
    public static var schemaName: String { "ReactParams" }
    public static var fields: [WireField] {
        [
            WireField("conversation", .nonEmptyString, "conversation id, or a unique prefix of it"),
            WireField("message", .nonEmptyString, "the message id, or a unique prefix of it"),
            WireField("emoji", .nonEmptyString, "the reaction"),
            WireField("remove", .boolean, optional: true, "take the reaction back (default false)"),
        ]
    }

    public var conversation: String
    public var message: String
    public var emoji: String
    public var remove: Bool

    public init(conversation: String, message: String, emoji: String, remove: Bool = false) {
        self.conversation = conversation
        self.message = message
        self.emoji = emoji
        self.remove = remove
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversation: try fields.nonEmptyString("conversation"), message: try fields.nonEmptyString("message"),
                  emoji: try fields.nonEmptyString("emoji"), remove: try fields.optionalBool("remove") ?? false)
    }

    public var json: JSONValue {
        ["conversation": .string(conversation), "message": .string(message), "emoji": .string(emoji), "remove": .bool(remove)]
    }
}
