import SottoWire

// MARK: - receipts

/// `receipts`: reads, and with `enabled` turns on or off, whether this device sends delivery
/// receipts for a conversation (`sotto receipts ID [--on|--off]`; docs/protocol/receipts.md).
/// On by default. Off, the conversation's senders see their messages to this device stay
/// `relayed` or `sent`, never `delivered`; receipts owed and not yet sealed are dropped.
///
/// ```swift
/// let now = try client.call(ReceiptsParams(conversation: "3fa2", enabled: false))
/// now.enabled   // false
/// ```
public struct ReceiptsParams: ControlRequest {
    public typealias Result = ReceiptsResult
    public static var method: ControlMethodName { .receipts }
    public static var summary: String {
        "Read or set whether this device sends delivery receipts for a conversation (on by default)."
    }
    public static var errors: [RPCErrorCode] { [.notFound] }
    public static var schemaName: String { "ReceiptsParams" }
    public static var fields: [WireField] {
        [
            WireField("conversation", .nonEmptyString, "conversation id, or a unique prefix of it"),
            WireField("enabled", .boolean, optional: true, "true to send receipts, false to stop; absent: only read"),
        ]
    }

    public var conversation: String
    public var enabled: Bool?

    public init(conversation: String, enabled: Bool? = nil) {
        self.conversation = conversation
        self.enabled = enabled
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversation: try fields.nonEmptyString("conversation"), enabled: try fields.optionalBool("enabled"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["conversation"] = .string(conversation)
        out["enabled"] = enabled.map(JSONValue.bool)
        return out.json
    }
}

/// The result of `receipts`: the conversation's full id and whether it sends receipts now.
///
/// ```swift
/// print("receipts \(result.enabled ? "on" : "off") for \(result.conversationId.prefix(12))")
/// ```
public struct ReceiptsResult: WireCodable {
    public var conversationId: String
    public var enabled: Bool

    public init(conversationId: String, enabled: Bool) {
        self.conversationId = conversationId
        self.enabled = enabled
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversationId: try fields.string("conversationId"), enabled: try fields.bool("enabled"))
    }

    public var json: JSONValue { ["conversationId": .string(conversationId), "enabled": .bool(enabled)] }

    public static var schemaName: String { "ReceiptsResult" }
    public static var fields: [WireField] {
        [
            WireField("conversationId", .string, "the conversation's id"),
            WireField("enabled", .boolean, "whether this device sends delivery receipts for it now"),
        ]
    }
}
