/// The content of a `sotto/attachment:1.0` message (docs/protocol/attachments.md §3): what a
/// member needs to fetch, check and open one stored file, and to show it before it has it.
/// Signed with the message, so `sha256` binds the stored bytes to their sender.
///
/// ```swift
/// let reference = AttachmentReference(id: id, size: 65_537, sha256: digest, key: secret,
///                                     name: "photo.jpg", mediaType: "image/jpeg")
/// let bytes = reference.encode()                          // the signed message's content
/// let back = try AttachmentReference.decode(bytes)        // malformed_message when it is not one
/// ```
public struct AttachmentReference: Sendable, Equatable {
    // MARK: Limits

    public static let idBytes = 16
    public static let keyBytes = 32
    public static let maxNameBytes = 1024
    public static let maxMediaTypeBytes = 127
    public static let maxCaptionBytes = ContentLimits.maxTextBytes
    public static let maxThumbnailBytes = 16_384
    /// What an older device shows instead (PROTOCOL §5: an unknown type needs a fallback).
    public static let outerFallback = "This message has a file this version of Sotto cannot show."
    static let jsonLimits = JSONParser.Limits(maxBytes: 1 << 20, maxDepth: 8, beyondMaxDepth: .skip)

    // MARK: Fields

    /// 16 random bytes: the stored file's name wherever it is kept.
    public let id: [UInt8]
    /// The file's own bytes (0 … 104,857,600), before padding.
    public let size: Int
    /// SHA-256 of the stored bytes (header, every chunk, tags).
    public let sha256: [UInt8]
    /// The 32-byte secret the chunk key is derived from. A secret: never log it.
    public let key: [UInt8]
    /// The sender's name for the file, as sent (1 … 1,024 bytes); save under
    /// `AttachmentFileName.safe(name)`.
    public let name: String
    /// What the sender says the file is; a claim, never a reason to trust the bytes.
    public let mediaType: String
    public let caption: String?
    /// A PNG or JPEG of at most 16 KiB, for an `image/` file only; not decoded here.
    public let thumbnail: [UInt8]?

    public init(id: [UInt8], size: Int, sha256: [UInt8], key: [UInt8], name: String, mediaType: String,
                caption: String? = nil, thumbnail: [UInt8]? = nil) {
        self.id = id
        self.size = size
        self.sha256 = sha256
        self.key = key
        self.name = name
        self.mediaType = mediaType
        self.caption = caption
        self.thumbnail = thumbnail
    }

    /// The stored length: a function of `size` alone (§4).
    public var length: Int { AttachmentLayout.storedLength(size) }

    // MARK: Encoding

    public func encode() -> [UInt8] {
        var object: JSONObject = [
            "id": .string(Hex.encode(id)), "size": .int(Int64(size)), "length": .int(Int64(length)),
            "sha256": .string(Hex.encode(sha256)), "key": .string(Hex.encode(key)), "name": .string(name),
            "mediaType": .string(mediaType),
        ]
        if let caption { object.set("caption", .string(caption)) }
        if let thumbnail { object.set("thumbnail", .string(Base64URL.encode(thumbnail))) }
        return JSONWriter.bytes(.object(object))
    }

    // MARK: Decoding

    /// `malformed_message` for anything that is not a reference of §3.
    public static func decode(_ bytes: [UInt8]) throws(PushError) -> AttachmentReference {
        guard let value = try? JSONParser.parse(bytes, limits: jsonLimits), value.object != nil else {
            throw PushError(.malformedMessage, "the attachment reference is not a JSON object")
        }
        func hex(_ key: String, bytes count: Int) throws(PushError) -> [UInt8] {
            guard let text = value[key]?.string, Hex.isCanonical(text, byteCount: count), let raw = Hex.decode(text, count: count) else {
                throw refused("\(key) is missing or not \(count * 2) lowercase hex")
            }
            return raw
        }
        let id = try hex("id", bytes: idBytes)
        guard let size64 = value["size"]?.int64, size64 >= 0, size64 <= Int64(AttachmentLayout.maxSize) else {
            throw refused("size is missing or not an integer in 0 … \(AttachmentLayout.maxSize)")
        }
        let size = Int(size64)
        guard let length = value["length"]?.int64, length == Int64(AttachmentLayout.storedLength(size)) else {
            throw refused("length is not the stored length of \(size) bytes")
        }
        let sha256 = try hex("sha256", bytes: 32)
        let key = try hex("key", bytes: keyBytes)
        guard let name = value["name"]?.string, (1...maxNameBytes).contains(name.utf8.count) else {
            throw refused("name is missing or not 1 … \(maxNameBytes) bytes")
        }
        guard let mediaType = value["mediaType"]?.string, isMediaType(mediaType) else {
            throw refused("mediaType is missing or not a lowercase type/subtype of at most \(maxMediaTypeBytes) bytes")
        }
        var caption: String?
        switch value["caption"] {
        case nil, .null?: caption = nil
        case .string(let text)? where (1...maxCaptionBytes).contains(text.utf8.count): caption = text
        default: throw refused("caption is not a string of 1 … \(maxCaptionBytes) bytes")
        }
        var thumbnail: [UInt8]?
        switch value["thumbnail"] {
        case nil, .null?: thumbnail = nil
        case .string(let text)?:
            guard let image = Base64URL.decode(text), (1...maxThumbnailBytes).contains(image.count) else {
                throw refused("thumbnail is not base64url of 1 … \(maxThumbnailBytes) bytes")
            }
            guard isThumbnailImage(image) else { throw refused("thumbnail is not a PNG or a JPEG") }
            guard mediaType.hasPrefix("image/") else { throw refused("a thumbnail for a \(mediaType) file") }
            thumbnail = image
        default: throw refused("thumbnail is not a string")
        }
        return AttachmentReference(id: id, size: size, sha256: sha256, key: key, name: name, mediaType: mediaType,
                                   caption: caption, thumbnail: thumbnail)
    }

    /// `type/subtype`, each a lowercase RFC 6838 restricted name, at most 127 bytes in all, no parameters.
    public static func isMediaType(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count <= maxMediaTypeBytes else { return false }
        let parts = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        return parts.allSatisfy { part in
            guard let first = part.first, isLowerAlphanumeric(first) else { return false }
            return part.allSatisfy { isLowerAlphanumeric($0) || Array("!#$&-^_.+".utf8).contains($0) }
        }
    }

    /// Starts with the PNG signature or a JPEG's start of image: the two thumbnail formats.
    public static func isThumbnailImage(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) || bytes.starts(with: [0xFF, 0xD8, 0xFF])
    }

    private static func isLowerAlphanumeric(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
    }

    private static func refused(_ detail: String) -> PushError {
        PushError(.malformedMessage, "the attachment reference's " + detail)
    }
}
