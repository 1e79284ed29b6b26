import SottoWire

// MARK: - leave

/// `leave`: a member who is not the creator leaves a conversation (`sotto leave`): every
/// member is told (`sotto/leave:1.0`, docs/protocol/leave-remove.md), then everything of it
/// is deleted on this device. The creator explodes instead (`refused`).
///
/// ```swift
/// let left = try client.call(LeaveParams(conversation: "ab12"))
/// left.members   // how many members are told (now, or when they are back)
/// ```
public struct LeaveParams: ControlRequest {
    public typealias Result = LeaveResult
    public static var method: ControlMethodName { .leave }
    public static var summary: String {
        "Leave a conversation someone else created: every member is told, then it is deleted here."
    }
    public static var errors: [RPCErrorCode] { [.notFound, .refused] }
    public static var schemaName: String { "LeaveParams" }
    public static var fields: [WireField] {
        [WireField("conversation", .nonEmptyString, "conversation id, or a unique prefix of it")]
    }

    public var conversation: String

    public init(conversation: String) {
        self.conversation = conversation
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversation: try fields.nonEmptyString("conversation"))
    }

    public var json: JSONValue { ["conversation": .string(conversation)] }
}

/// The result of `leave`.
///
/// ```swift
/// "left \(left.conversationId): told \(left.members) member(s)"
/// ```
public struct LeaveResult: WireCodable {
    public var conversationId: String
    public var members: Int

    public init(conversationId: String, members: Int) {
        self.conversationId = conversationId
        self.members = members
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversationId: try fields.string("conversationId"), members: try fields.count("members"))
    }

    public var json: JSONValue { ["conversationId": .string(conversationId), "members": .int(Int64(members))] }

    public static var schemaName: String { "LeaveResult" }
    public static var fields: [WireField] {
        [
            WireField("conversationId", .string, "the conversation's id"),
            WireField("members", .integer(minimum: 0),
                      "members the leave is sealed to; those not reached yet are told when they are back, for up to 30 days"),
        ]
    }
}
