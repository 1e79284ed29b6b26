import SottoWire

/// The envelope plaintext of PROTOCOL §4: a message signed by its sender's inbox key.
///
/// ```swift
/// let message = SignedMessage.sign(id: id, conversationId: cid, sentAtMs: now,
///                                  contentType: ContentType.text, content: Array("hi".utf8),
///                                  fallback: nil, signer: alice.privateKey)
/// let bytes = message.encode()
/// let back = try SignedMessage.parse(bytes)
/// try back.verify()
/// ```
public struct SignedMessage: Sendable, Equatable {
    public static let maxBytes = 4096
    public static let maxContentTypeBytes = 128
    /// What `sentAtMs` may be: from the Unix epoch to the end of year 9999 (what ISO 8601
    /// dates show, exact in a double). docs/adr/0014.
    public static let sentAtRange: ClosedRange<Int64> = 0...ISO8601.maxMillis
    /// Known fields sit at depth 2; deeper unknown values are checked and ignored.
    static let jsonLimits = JSONParser.Limits(maxBytes: maxBytes, maxDepth: 8, beyondMaxDepth: .skip)
    static let domain = "sotto/message/v1"

    public let id: String
    public let conversationId: String
    public let senderInboxId: String
    /// Compressed public key, lowercase hex (66 characters).
    public let senderPublicKey: String
    public let sentAtMs: Int64
    public let contentType: String
    /// The base64url content string exactly as sent (it is what the signature covers).
    public let content: String
    public let fallback: String?
    /// Compact `r || s`, lowercase hex (128 characters).
    public let signature: String
    /// `content` decoded.
    public let contentBytes: [UInt8]

    // MARK: - Signing

    /// The bytes whose SHA-256 is signed: the domain line then each field, each followed by LF.
    public static func signingInput(id: String, conversationId: String, senderInboxId: String,
                                    sentAtMs: Int64, contentType: String, content: String) -> [UInt8] {
        var out: [UInt8] = []
        for line in [domain, id, conversationId, senderInboxId, String(sentAtMs), contentType, content] {
            out.append(contentsOf: line.utf8)
            out.append(0x0a)
        }
        return out
    }

    public static func sign(id: String, conversationId: String, sentAtMs: Int64, contentType: String,
                            content: [UInt8], fallback: String?, signer: PrivateKey) -> SignedMessage {
        let senderInboxId = signer.publicKey.inboxId
        let encoded = Base64URL.encode(content)
        let digest = SHA256.hash(signingInput(id: id, conversationId: conversationId, senderInboxId: senderInboxId,
                                              sentAtMs: sentAtMs, contentType: contentType, content: encoded))
        return SignedMessage(
            id: id, conversationId: conversationId, senderInboxId: senderInboxId,
            senderPublicKey: signer.publicKey.hex, sentAtMs: sentAtMs, contentType: contentType,
            content: encoded, fallback: fallback, signature: Hex.encode(signer.sign(digest: digest)),
            contentBytes: content)
    }

    /// `bad_signature` when the signature does not verify against `senderPublicKey` (high-S
    /// accepted) or `senderInboxId` is not hex(SHA-256(senderPublicKey)).
    public func verify() throws(PushError) {
        guard let key = try? PublicKey(hex: senderPublicKey) else {
            throw PushError(.badSignature, "senderPublicKey is not a valid secp256k1 point")
        }
        guard key.inboxId == senderInboxId else {
            throw PushError(.badSignature, "senderInboxId does not match senderPublicKey")
        }
        guard let signatureBytes = Hex.decode(signature, count: 64) else {
            throw PushError(.badSignature, "signature is not 64 bytes")
        }
        let digest = SHA256.hash(Self.signingInput(
            id: id, conversationId: conversationId, senderInboxId: senderInboxId,
            sentAtMs: sentAtMs, contentType: contentType, content: content))
        guard key.isValidSignature(signatureBytes, digest: digest) else {
            throw PushError(.badSignature, "signature does not verify")
        }
    }

    // MARK: - Wire form

    /// `malformed_message` for anything that is not a well-formed §4 object. Does not verify.
    public static func parse(_ plaintext: [UInt8]) throws(PushError) -> SignedMessage {
        guard plaintext.count <= maxBytes else { throw PushError(.malformedMessage, "message is too large") }
        let value: JSONValue
        do {
            value = try JSONParser.parse(plaintext, limits: jsonLimits)
        } catch {
            throw PushError(.malformedMessage, "message is not valid JSON (\(error))")
        }
        guard value.object != nil else { throw PushError(.malformedMessage, "message is not a JSON object") }

        func field(_ name: String, _ isValid: (String) -> Bool) throws(PushError) -> String {
            guard let text = value[name]?.string, isValid(text) else {
                throw PushError(.malformedMessage, "\(name) is missing or malformed")
            }
            return text
        }
        let id = try field("id", ProtocolIds.isId16)
        let conversationId = try field("conversationId", ProtocolIds.isId16)
        let senderInboxId = try field("senderInboxId", ProtocolIds.isInboxId)
        let senderPublicKey = try field("senderPublicKey") { Hex.isCanonical($0, byteCount: PublicKey.byteCount) }
        let contentType = try field("contentType", isContentType)
        let content = try field("content") { _ in true }
        let signature = try field("signature") { Hex.isCanonical($0, byteCount: 64) }
        guard let sentAtMs = value["sentAtMs"]?.int64 else {
            throw PushError(.malformedMessage, "sentAtMs is missing or not an integer")
        }
        guard sentAtRange.contains(sentAtMs) else {
            throw PushError(.malformedMessage, "sentAtMs \(sentAtMs) is outside 1970-01-01…9999-12-31 (0…\(ISO8601.maxMillis))")
        }
        guard let contentBytes = Base64URL.decode(content) else {
            throw PushError(.malformedMessage, "content is not base64url")
        }
        var fallback: String?
        switch value["fallback"] {
        case nil, .null?: fallback = nil
        case .string(let text)?: fallback = text
        default: throw PushError(.malformedMessage, "fallback is not a string")
        }
        return SignedMessage(
            id: id, conversationId: conversationId, senderInboxId: senderInboxId, senderPublicKey: senderPublicKey,
            sentAtMs: sentAtMs, contentType: contentType, content: content, fallback: fallback,
            signature: signature, contentBytes: contentBytes)
    }

    /// A content type is printable ASCII without spaces: it is one line of the signing input.
    static func isContentType(_ text: String) -> Bool {
        let utf8 = text.utf8
        return !utf8.isEmpty && utf8.count <= maxContentTypeBytes && utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f }
    }

    public func encode() -> [UInt8] {
        var object: JSONObject = [
            "id": .string(id), "conversationId": .string(conversationId), "senderInboxId": .string(senderInboxId),
            "senderPublicKey": .string(senderPublicKey), "sentAtMs": .int(sentAtMs),
            "contentType": .string(contentType), "content": .string(content),
        ]
        if let fallback { object.set("fallback", .string(fallback)) }
        object.set("signature", .string(signature))
        return JSONWriter.bytes(.object(object))
    }
}
