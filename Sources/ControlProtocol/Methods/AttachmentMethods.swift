import SottoWire

// MARK: - sendAttachment

/// `sendAttachment`: the daemon reads the file at `path` once, streaming, encrypts it into its
/// stored form in the group directory, and sends a signed `sotto/attachment:1.0` message whose
/// content is the reference to every member (`sotto send ID --file PATH`;
/// docs/protocol/attachments.md §7, docs/adr/0074). Answers once the file is stored and the
/// message queued; a file over 104,857,600 bytes, or one that changes while read, is refused
/// with nothing stored.
///
/// ```swift
/// let sent = try client.call(SendAttachmentParams(conversation: "ab12", path: "/home/ann/photo.jpg"))
/// print("sent \(sent.messageId): \(sent.size) bytes to \(sent.recipients) member(s)")
/// ```
public struct SendAttachmentParams: ControlRequest {
    public typealias Result = SentAttachment
    public static var method: ControlMethodName { .sendAttachment }
    public static var summary: String { "Send a file (up to 100 MiB) to a conversation." }
    public static var errors: [RPCErrorCode] { [.notFound, .refused] }
    public static var schemaName: String { "SendAttachmentParams" }
    public static var fields: [WireField] {
        [
            WireField("conversation", .nonEmptyString, "conversation id, or a unique prefix of it"),
            WireField("path", .nonEmptyString,
                      "an absolute path the daemon can read: a regular file of at most 104,857,600 bytes "
                      + "(else invalidParams, nothing stored)"),
            WireField("name", .nonEmptyString, optional: true,
                      "the file's name as the members see it (default: the path's last part); 1 to 1,024 bytes of UTF-8, "
                      + "no control characters"),
            WireField("caption", .nonEmptyString, optional: true, "a text sent with the file: 1 to 65,536 bytes of UTF-8"),
        ]
    }

    public var conversation: String
    public var path: String
    public var name: String?
    public var caption: String?

    public init(conversation: String, path: String, name: String? = nil, caption: String? = nil) {
        self.conversation = conversation
        self.path = path
        self.name = name
        self.caption = caption
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversation: try fields.nonEmptyString("conversation"), path: try fields.nonEmptyString("path"),
                  name: try fields.optionalString("name"), caption: try fields.optionalString("caption"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["conversation"] = .string(conversation)
        out["path"] = .string(path)
        out["name"] = name.map(JSONValue.string)
        out["caption"] = caption.map(JSONValue.string)
        return out.json
    }
}

/// The result of `sendAttachment`: the message, how many members it goes to, and the file as
/// its reference describes it.
///
/// ```swift
/// sent.size            // 1_048_576
/// sent.storedLength    // 1_048_840: what any store of the file holds
/// ```
public struct SentAttachment: WireCodable {
    public var messageId: String
    public var recipients: Int
    public var name: String
    public var size: Int64
    public var storedLength: Int64
    public var mediaType: String

    public init(messageId: String, recipients: Int, name: String, size: Int64, storedLength: Int64, mediaType: String) {
        self.messageId = messageId
        self.recipients = recipients
        self.name = name
        self.size = size
        self.storedLength = storedLength
        self.mediaType = mediaType
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(messageId: try fields.string("messageId"), recipients: try fields.count("recipients"),
                  name: try fields.string("name"), size: try fields.int("size", minimum: 0),
                  storedLength: try fields.int("storedLength", minimum: 0), mediaType: try fields.string("mediaType"))
    }

    public var json: JSONValue {
        ["messageId": .string(messageId), "recipients": .int(Int64(recipients)), "name": .string(name),
         "size": .int(size), "storedLength": .int(storedLength), "mediaType": .string(mediaType)]
    }

    public static var schemaName: String { "SentAttachment" }
    public static var fields: [WireField] {
        [
            WireField("messageId", .string, "the new message's id"),
            WireField("recipients", .integer(minimum: 0), "members it is being delivered to"),
            WireField("name", .string, "the file's name in the reference"),
            WireField("size", .integer(minimum: 0), "the file's size in bytes"),
            WireField("storedLength", .integer(minimum: 0), "the stored (encrypted, padded) file's length in bytes"),
            WireField("mediaType", .string, "the media type the reference claims"),
        ]
    }
}

// MARK: - A message's attachment

/// A message's file as a client shows it (`MessageInfo.attachment`): never the key or the
/// digest. `name` and `caption` are the sender's and untrusted: show them inert.
///
/// ```swift
/// if let file = message.attachment { print("📎", InertText.line(file.name), file.size, file.state) }
/// ```
public struct AttachmentInfo: WireCodable {
    public var name: String
    public var size: Int64
    public var mediaType: String
    /// `waiting` (the reference is here, the file is not), `fetching` (`bytesDone` of
    /// `storedLength`), `available` (this device holds the stored file) or `failed` (`failure`).
    public var state: String
    public var caption: String?
    /// While `fetching`: bytes of the stored file fetched and checked.
    public var bytesDone: Int64?
    /// The stored file's length (what `bytesDone` counts to): the padded size the relay holds.
    public var storedLength: Int64?
    /// When `failed`: why, in Sotto's words.
    public var failure: String?

    public init(name: String, size: Int64, mediaType: String, state: String, caption: String? = nil,
                bytesDone: Int64? = nil, storedLength: Int64? = nil, failure: String? = nil) {
        self.name = name
        self.size = size
        self.mediaType = mediaType
        self.state = state
        self.caption = caption
        self.bytesDone = bytesDone
        self.storedLength = storedLength
        self.failure = failure
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(name: try fields.string("name"), size: try fields.int("size", minimum: 0),
                  mediaType: try fields.string("mediaType"), state: try fields.string("state"),
                  caption: try fields.optionalString("caption"), bytesDone: try fields.optionalInt("bytesDone", minimum: 0),
                  storedLength: try fields.optionalInt("storedLength", minimum: 0), failure: try fields.optionalString("failure"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["name"] = .string(name)
        out["size"] = .int(size)
        out["mediaType"] = .string(mediaType)
        out["state"] = .string(state)
        out["caption"] = caption.map(JSONValue.string)
        out["bytesDone"] = bytesDone.map(JSONValue.int)
        out["storedLength"] = storedLength.map(JSONValue.int)
        out["failure"] = failure.map(JSONValue.string)
        return out.json
    }

    public static var schemaName: String { "Attachment" }
    public static var fields: [WireField] {
        [
            WireField("name", .string, "the sender's name for the file (untrusted: show it inert)"),
            WireField("size", .integer(minimum: 0), "the file's size in bytes"),
            WireField("mediaType", .string, "the media type the sender claims"),
            WireField("state", .string,
                      "waiting (the reference is here, the file is not, and no fetch is under way), fetching, available "
                      + "(this device holds the stored file, whole and checked) or failed"),
            WireField("caption", .string, optional: true, "the text sent with the file"),
            WireField("bytesDone", .integer(minimum: 0), optional: true,
                      "while fetching: bytes of the stored file fetched and checked so far"),
            WireField("storedLength", .integer(minimum: 0), optional: true,
                      "the stored (padded, encrypted) file's length, what bytesDone counts to"),
            WireField("failure", .string, optional: true, "when failed: why"),
        ]
    }
}
