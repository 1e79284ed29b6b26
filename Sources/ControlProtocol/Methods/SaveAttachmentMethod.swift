import SottoWire

// MARK: - saveAttachment

/// `saveAttachment`: the daemon opens the message's stored file, decrypts it chunk by chunk
/// (every tag checked as it comes, the SHA-256 of the stored file at the end) and streams
/// the file's bytes on this connection as `attachmentData` notifications, in order, then
/// answers. Only the answer says the bytes were the file: a client writes them where nobody
/// takes them for it and keeps them only on a result (`sotto save MESSAGE [DEST]`;
/// docs/protocol/attachments.md "Saving", docs/adr/0077). The daemon writes the next
/// notification only when the client has read most of the ones before: a slow client slows
/// it down, it does not make it hold the file.
///
/// ```swift
/// let saved = try client.save(SaveAttachmentParams(message: "3fa2")) { data in try sink.write(data.bytes) }
/// print("\(saved.size) bytes of \(saved.name)")
/// ```
public struct SaveAttachmentParams: ControlRequest {
    public typealias Result = SavedAttachment
    public static var method: ControlMethodName { .saveAttachment }
    public static var summary: String {
        "Stream a file a message carries (decrypted and verified by the daemon) as attachmentData notifications, then answer."
    }
    public static var errors: [RPCErrorCode] { [.notFound, .refused, .unavailable] }
    public static var schemaName: String { "SaveAttachmentParams" }
    public static var fields: [WireField] {
        [
            WireField("message", .nonEmptyString,
                      "the attachment message's id, or a prefix of it unique among all conversations' messages"),
        ]
    }

    public var message: String

    public init(message: String) {
        self.message = message
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(message: try fields.nonEmptyString("message"))
    }

    public var json: JSONValue { ["message": .string(message)] }
}

/// The result of `saveAttachment`, sent after the last `attachmentData`: every chunk opened
/// and the stored file's SHA-256 is the reference's, so the `size` bytes streamed are the file.
/// `name` is the sender's (untrusted: never a path; `AttachmentFileName.safe` makes one).
///
/// ```swift
/// guard received == saved.size else { throw … }   // the bytes streamed, counted by the client
/// let path = directory + "/" + AttachmentFileName.safe(saved.name)
/// ```
public struct SavedAttachment: WireCodable {
    public var messageId: String
    public var name: String
    public var size: Int64
    public var mediaType: String

    public init(messageId: String, name: String, size: Int64, mediaType: String) {
        self.messageId = messageId
        self.name = name
        self.size = size
        self.mediaType = mediaType
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(messageId: try fields.string("messageId"), name: try fields.string("name"),
                  size: try fields.int("size", minimum: 0), mediaType: try fields.string("mediaType"))
    }

    public var json: JSONValue {
        ["messageId": .string(messageId), "name": .string(name), "size": .int(size), "mediaType": .string(mediaType)]
    }

    public static var schemaName: String { "SavedAttachment" }
    public static var fields: [WireField] {
        [
            WireField("messageId", .string, "the message's full id"),
            WireField("name", .string, "the sender's name for the file (untrusted: never use it as a path)"),
            WireField("size", .integer(minimum: 0), "the file's size: the bytes the attachmentData notifications carried"),
            WireField("mediaType", .string, "the media type the sender claims"),
        ]
    }
}

// MARK: - attachmentData notification

/// The `attachmentData` notification: the next bytes of the file a `saveAttachment` on this
/// connection is streaming, at `offset`, of `size` in all (for a progress bar). At most
/// 65,536 bytes each (one chunk of the stored file), in order, none for an empty file. Not
/// the file until the request's result arrives: an error instead means discard them.
///
/// ```swift
/// let piece = try AttachmentData(json: params)
/// piece.bytes.count   // ≤ 65,536
/// ```
public struct AttachmentData: WireCodable {
    public var offset: Int64
    public var size: Int64
    /// base64url (no padding) of the bytes.
    public var data: String

    public init(offset: Int64, size: Int64, data: String) {
        self.offset = offset
        self.size = size
        self.data = data
    }

    public init(offset: Int64, size: Int64, bytes: UnsafeRawBufferPointer) {
        self.init(offset: offset, size: size, data: Base64URL.encode(bytes.bindMemory(to: UInt8.self)))
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(offset: try fields.int("offset", minimum: 0), size: try fields.int("size", minimum: 0),
                  data: try fields.string("data"))
    }

    /// The bytes `data` carries; nil when it is not base64url.
    public var bytes: [UInt8]? { Base64URL.decode(data) }

    public var json: JSONValue { ["offset": .int(offset), "size": .int(size), "data": .string(data)] }

    public static var schemaName: String { "AttachmentData" }
    public static var fields: [WireField] {
        [
            WireField("offset", .integer(minimum: 0), "where these bytes are in the file"),
            WireField("size", .integer(minimum: 0), "the file's size"),
            WireField("data", .string, "base64url (RFC 4648 §5, no padding) of at most 65,536 of the file's bytes"),
        ]
    }
}
