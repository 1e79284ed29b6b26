import SottoWire

// MARK: - dismissRefusal

/// `dismissRefusal`: forgets a join the creator refused (`sotto dismiss`), once the user has
/// seen it in `sotto ls` (docs/protocol/join-refusal.md). Its conversation and identity were
/// already deleted when the refusal came; this removes the entry that told the user.
///
/// ```swift
/// let dismissed = try client.call(DismissRefusalParams(conversation: "3fa2"))
/// dismissed.conversationId   // the full id
/// ```
public struct DismissRefusalParams: ControlRequest {
    public typealias Result = DismissRefusalResult
    public static var method: ControlMethodName { .dismissRefusal }
    public static var summary: String { "Forget a refused join that `sotto ls` shows." }
    public static var errors: [RPCErrorCode] { [.notFound, .invalidParams] }
    public static var schemaName: String { "DismissRefusalParams" }
    public static var fields: [WireField] {
        [WireField("conversation", .nonEmptyString, "the refused conversation's id, or a unique prefix of it")]
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

/// The result of `dismissRefusal`.
///
/// ```swift
/// "dismissed \(result.conversationId)"
/// ```
public struct DismissRefusalResult: WireCodable {
    public var conversationId: String

    public init(conversationId: String) {
        self.conversationId = conversationId
    }

    public init(json: JSONValue) throws(WireError) {
        self.init(conversationId: try WireFields(json).string("conversationId"))
    }

    public var json: JSONValue { ["conversationId": .string(conversationId)] }

    public static var schemaName: String { "DismissRefusalResult" }
    public static var fields: [WireField] {
        [WireField("conversationId", .string, "the dismissed conversation's id")]
    }
}
