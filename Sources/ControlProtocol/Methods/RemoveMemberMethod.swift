import SottoWire

// MARK: - removeMember

/// `removeMember`: the creator removes a member (`sotto remove`): every member is told, the
/// removed device deletes the conversation, and nothing sent afterwards is sealed to it.
///
/// ```swift
/// let removed = try client.call(RemoveMemberParams(conversation: "ab12", member: "Bob"))
/// removed.inboxId   // the removed member's inbox id
/// ```
public struct RemoveMemberParams: ControlRequest {
    public typealias Result = RemovedMember
    public static var method: ControlMethodName { .removeMember }
    public static var summary: String { "Remove a member from a conversation this device created." }
    public static var errors: [RPCErrorCode] { [.notFound, .refused] }
    public static var schemaName: String { "RemoveMemberParams" }
    public static var fields: [WireField] {
        [
            WireField("conversation", .nonEmptyString, "conversation id, or a unique prefix of it"),
            WireField("member", .nonEmptyString, "the member's profile name, or its inbox id or a unique prefix of it"),
        ]
    }

    public var conversation: String
    public var member: String

    public init(conversation: String, member: String) {
        self.conversation = conversation
        self.member = member
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversation: try fields.nonEmptyString("conversation"), member: try fields.nonEmptyString("member"))
    }

    public var json: JSONValue { ["conversation": .string(conversation), "member": .string(member)] }
}

/// The result of `removeMember`.
///
/// ```swift
/// "removed \(removed.inboxId.prefix(12)): told \(removed.members) member(s)"
/// ```
public struct RemovedMember: WireCodable {
    public var conversationId: String
    public var inboxId: String
    public var members: Int

    public init(conversationId: String, inboxId: String, members: Int) {
        self.conversationId = conversationId
        self.inboxId = inboxId
        self.members = members
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversationId: try fields.string("conversationId"), inboxId: try fields.string("inboxId"),
                  members: try fields.count("members"))
    }

    public var json: JSONValue {
        ["conversationId": .string(conversationId), "inboxId": .string(inboxId), "members": .int(Int64(members))]
    }

    public static var schemaName: String { "RemovedMember" }
    public static var fields: [WireField] {
        [
            WireField("conversationId", .string, "the conversation"),
            WireField("inboxId", .string, "the removed member's inbox id"),
            WireField("members", .integer(minimum: 0), "members the removal is sealed to, the removed one included"),
        ]
    }
}
