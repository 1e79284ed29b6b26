import SottoWire

// MARK: - muteConversation

/// `muteConversation`: mutes or unmutes a conversation on this device (`sotto mute ID`,
/// `--unmute`). Local state only: the members are not told. The worker posts no desktop
/// notification for a muted conversation's messages; they are stored and counted unread
/// as always.
///
/// ```swift
/// let muted = try client.call(MuteConversationParams(conversation: "3fa2", muted: true))
/// muted.muted   // true
/// ```
public struct MuteConversationParams: ControlRequest {
    public typealias Result = MuteConversationResult
    public static var method: ControlMethodName { .muteConversation }
    public static var summary: String {
        "Mute or unmute a conversation on this device: no desktop notifications for its messages while muted."
    }
    public static var errors: [RPCErrorCode] { [.notFound] }
    public static var schemaName: String { "MuteConversationParams" }
    public static var fields: [WireField] {
        [
            WireField("conversation", .nonEmptyString, "conversation id, or a unique prefix of it"),
            WireField("muted", .boolean, "true to mute, false to unmute"),
        ]
    }

    public var conversation: String
    public var muted: Bool

    public init(conversation: String, muted: Bool) {
        self.conversation = conversation
        self.muted = muted
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversation: try fields.nonEmptyString("conversation"), muted: try fields.bool("muted"))
    }

    public var json: JSONValue { ["conversation": .string(conversation), "muted": .bool(muted)] }
}

/// The result of `muteConversation`: the conversation's full id and its flag now.
///
/// ```swift
/// print("\(result.muted ? "muted" : "unmuted") \(result.conversationId.prefix(12))")
/// ```
public struct MuteConversationResult: WireCodable {
    public var conversationId: String
    public var muted: Bool

    public init(conversationId: String, muted: Bool) {
        self.conversationId = conversationId
        self.muted = muted
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversationId: try fields.string("conversationId"), muted: try fields.bool("muted"))
    }

    public var json: JSONValue { ["conversationId": .string(conversationId), "muted": .bool(muted)] }

    public static var schemaName: String { "MuteConversationResult" }
    public static var fields: [WireField] {
        [
            WireField("conversationId", .string, "the conversation's id"),
            WireField("muted", .boolean, "whether it is muted now"),
        ]
    }
}
