import SottoWire

// MARK: - notificationPreview

/// `notificationPreview`: what desktop notifications show (`sotto notifications`): `full`
/// (name and text), `name` (name only) or `none` ("New message"), for the device or, overriding
/// it, one conversation; `default` puts a conversation back on the device's setting. Without
/// `preview` it only reads.
///
/// ```swift
/// try client.call(NotificationPreviewParams(preview: "name"))                    // the device
/// try client.call(NotificationPreviewParams(conversation: "ab12", preview: "none"))
/// let now = try client.call(NotificationPreviewParams(conversation: "ab12"))   // read
/// ```
public struct NotificationPreviewParams: ControlRequest {
    public typealias Result = NotificationPreviewResult
    public static var method: ControlMethodName { .notificationPreview }
    public static var summary: String { "Read or set what desktop notifications show, for the device or one conversation." }
    public static var errors: [RPCErrorCode] { [.notFound] }
    public static var schemaName: String { "NotificationPreviewParams" }
    /// The values `preview` takes: the three settings and `default`.
    public static let values = NotificationPreview.allCases.map(\.rawValue) + ["default"]
    public static var fields: [WireField] {
        [
            WireField("conversation", .nonEmptyString, optional: true, "conversation id or unique prefix; absent: the device"),
            WireField("preview", .nonEmptyString, optional: true,
                      "full, name, none, or default (a conversation follows the device again); absent: read only"),
        ]
    }

    public var conversation: String?
    public var preview: String?

    public init(conversation: String? = nil, preview: String? = nil) {
        self.conversation = conversation
        self.preview = preview
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        let conversation = try fields.optionalString("conversation")
        if conversation?.isEmpty == true { throw WireError("'conversation' must not be empty") }
        let preview = try fields.optionalString("preview")
        if let preview, !Self.values.contains(preview) {
            throw WireError("'preview' must be one of \(Self.values.joined(separator: ", "))")
        }
        self.init(conversation: conversation, preview: preview)
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["conversation"] = conversation.map(JSONValue.string)
        out["preview"] = preview.map(JSONValue.string)
        return out.json
    }
}

/// The result of `notificationPreview`: the device's setting, and for a conversation its own
/// (null: it follows the device) and the one its notifications use.
///
/// ```swift
/// result.effective   // "name"
/// ```
public struct NotificationPreviewResult: WireCodable {
    public var device: String
    public var conversationId: String?
    public var conversationPreview: String?
    public var effective: String

    public init(device: String, conversationId: String? = nil, conversationPreview: String? = nil, effective: String) {
        self.device = device
        self.conversationId = conversationId
        self.conversationPreview = conversationPreview
        self.effective = effective
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(device: try fields.string("device"), conversationId: try fields.optionalString("conversationId"),
                  conversationPreview: try fields.optionalString("conversationPreview"), effective: try fields.string("effective"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["device"] = .string(device)
        out["conversationId"] = conversationId.map(JSONValue.string)
        out["conversationPreview"] = conversationPreview.map(JSONValue.string)
        out["effective"] = .string(effective)
        return out.json
    }

    public static var schemaName: String { "NotificationPreviewResult" }
    public static var fields: [WireField] {
        [
            WireField("device", .string, "the device's setting: full, name or none"),
            WireField("conversationId", .string, optional: true, "the conversation asked about"),
            WireField("conversationPreview", .string, optional: true, "its own setting; absent: it follows the device"),
            WireField("effective", .string, "what its (or, without a conversation, the device's) notifications show"),
        ]
    }
}
