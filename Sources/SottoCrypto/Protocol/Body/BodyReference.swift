import SottoWire

/// The content of a `sotto/body:1.0` message (docs/protocol/bodies.md §4): what a member
/// needs to fetch, check and open one sealed body. Signed with the message, so the hash
/// binds the body to its sender.
///
/// ```swift
/// let body = SealedBody.seal(content)
/// let reference = BodyReference(body, contentType: ContentType.text, fallback: nil)
/// let bytes = reference.encode()                        // the signed message's content
/// let back = try BodyReference.decode(bytes)            // malformed_message when it is not one
/// let content = try back.open(receivedBytes)            // body_mismatch when it does not match
/// ```
public struct BodyReference: Sendable, Equatable {
    public static let maxFallbackBytes = 256
    /// The outer message's fallback: what a device from before bodies by reference shows.
    public static let outerFallback = "This message is too long for this version of Sotto."

    /// 32 lowercase hex.
    public let id: String
    public let length: Int64
    /// SHA-256 of the sealed bytes, 64 lowercase hex.
    public let sha256: String
    /// 64 lowercase hex.
    public let key: String
    /// The inner content's type.
    public let contentType: String
    public let fallback: String?

    public init(id: String, length: Int64, sha256: String, key: String, contentType: String, fallback: String?) {
        self.id = id
        self.length = length
        self.sha256 = sha256
        self.key = key
        self.contentType = contentType
        self.fallback = fallback
    }

    public init(_ body: SealedBody, contentType: String, fallback: String?) {
        self.init(id: Hex.encode(body.id), length: Int64(body.sealed.count), sha256: Hex.encode(SHA256.hash(body.sealed)),
                  key: Hex.encode(body.key), contentType: contentType, fallback: fallback)
    }

    /// What the push shows in clear of this body.
    public var hint: BodyHint { BodyHint(id: id, length: length) }

    /// Whether a content of this type may travel by reference: anything but the types of
    /// docs/protocol/bodies.md §4's one list (a reference: no nesting; a join request: a
    /// non-member's request always fits inline; a receipt and a join refusal: they always fit one push).
    public static func mayCarry(_ contentType: String) -> Bool {
        contentType != ContentType.body && contentType != ContentType.joinRequest && contentType != ContentType.receipt
            && contentType != ContentType.joinRefused
    }

    public func encode() -> [UInt8] {
        var object: JSONObject = [
            "id": .string(id), "length": .int(length), "sha256": .string(sha256), "key": .string(key),
            "contentType": .string(contentType),
        ]
        if let fallback { object.set("fallback", .string(fallback)) }
        return JSONWriter.bytes(.object(object))
    }

    /// `malformed_message` for anything that is not a reference of §4.
    public static func decode(_ bytes: [UInt8]) throws(PushError) -> BodyReference {
        guard let value = try? JSONParser.parse(bytes, limits: SignedMessage.jsonLimits), value.object != nil else {
            throw PushError(.malformedMessage, "the body reference is not a JSON object")
        }
        func field(_ name: String, _ isValid: (String) -> Bool) throws(PushError) -> String {
            guard let text = value[name]?.string, isValid(text) else {
                throw PushError(.malformedMessage, "the body reference's \(name) is missing or malformed")
            }
            return text
        }
        let id = try field("id", ProtocolIds.isId16)
        guard let length = value["length"]?.int64, BodySize.isValidLength(length) else {
            throw PushError(.malformedMessage, "the body reference's length is missing or not a sealed body's length")
        }
        let sha256 = try field("sha256") { Hex.isCanonical($0, byteCount: 32) }
        let key = try field("key") { Hex.isCanonical($0, byteCount: 32) }
        let contentType = try field("contentType", SignedMessage.isContentType)
        guard mayCarry(contentType) else {
            throw PushError(.malformedMessage, "\(contentType) cannot travel by reference")
        }
        var fallback: String?
        switch value["fallback"] {
        case nil, .null?: fallback = nil
        case .string(let text)? where text.utf8.count <= maxFallbackBytes: fallback = text
        default: throw PushError(.malformedMessage, "the body reference's fallback is not a string of at most \(maxFallbackBytes) bytes")
        }
        return BodyReference(id: id, length: length, sha256: sha256, key: key, contentType: contentType, fallback: fallback)
    }

    /// Checks the received bytes against this reference (steps 7–10 of §7) and returns the
    /// content. `hint` is what the push showed.
    public func open(_ sealed: [UInt8], hint: BodyHint) throws(PushError) -> [UInt8] {
        guard hint.id == id, hint.length == length else {
            throw PushError(.bodyMismatch, "the push's body is not the one its message references")
        }
        guard Int64(sealed.count) == length else {
            throw PushError(.bodyMismatch, "the body is \(sealed.count) bytes, its reference says \(length)")
        }
        guard Hex.encode(SHA256.hash(sealed)) == sha256 else {
            throw PushError(.bodyMismatch, "the body's SHA-256 is not its reference's")
        }
        return try SealedBody.open(sealed, id: Hex.decode(id, count: 16)!, key: Hex.decode(key, count: 32)!)
    }
}
