import SottoWire

/// Why an invite code was refused.
public enum InviteError: Error, Sendable, Equatable, CustomStringConvertible {
    case tooLarge
    /// Does not start with `sotto1:` or is not base64url JSON.
    case notAnInvite
    case malformed(String)
    case badSignature
    case expired

    public var description: String {
        switch self {
        case .tooLarge: return "invite code is too long"
        case .notAnInvite: return "not a sotto1: invite code"
        case .malformed(let why): return "invite code is malformed: \(why)"
        case .badSignature: return "invite code signature is invalid"
        case .expired: return "invite code has expired"
        }
    }
}

/// An invite code (PROTOCOL §6): `sotto1:` + base64url(JSON), signed by the conversation's
/// creator.
///
/// ```swift
/// let invite = try InviteCode.make(conversationId: cid, name: "Friends",
///                                  creatorEndpoint: "unix:/run/user/1000/sotto/push.sock",
///                                  creatorClientId: me.clientId, expiresAtMs: nil, signer: me.privateKey)
/// let text = invite.code                      // "sotto1:eyJ…"
/// let back = try InviteCode.parse(text, nowMs: WallClock.nowMs())
/// ```
public struct InviteCode: Sendable, Equatable {
    public static let prefix = "sotto1:"
    public static let maxCharacters = 4096
    public static let maxNameBytes = 256
    static let domain = "sotto/invite/v1"

    public let conversationId: String
    public let topic: String
    public let name: String
    public let creatorInboxId: String
    public let creatorPublicKey: String
    public let creatorEndpoint: String
    public let creatorClientId: String
    public let inviteId: String
    public let secret: String
    public let expiresAtMs: Int64?
    public let signature: String

    // MARK: - Making

    public static func make(conversationId: String, name: String, creatorEndpoint: String, creatorClientId: String,
                            inviteId: String = Hex.encode(SecureRandom.bytes(16)),
                            secret: String = Hex.encode(SecureRandom.bytes(32)),
                            expiresAtMs: Int64?, signer: PrivateKey) throws(InviteError) -> InviteCode {
        let digest = SHA256.hash(signingInput(conversationId: conversationId, inviteId: inviteId, secret: secret,
                                              creatorEndpoint: creatorEndpoint, creatorClientId: creatorClientId))
        let invite = InviteCode(
            conversationId: conversationId, topic: ProtocolIds.topic(conversationId: conversationId), name: name,
            creatorInboxId: signer.publicKey.inboxId, creatorPublicKey: signer.publicKey.hex,
            creatorEndpoint: creatorEndpoint, creatorClientId: creatorClientId, inviteId: inviteId, secret: secret,
            expiresAtMs: expiresAtMs, signature: Hex.encode(signer.sign(digest: digest)))
        try invite.validateFields()
        guard invite.code.utf8.count <= maxCharacters else { throw .tooLarge }
        return invite
    }

    public static func signingInput(conversationId: String, inviteId: String, secret: String,
                                    creatorEndpoint: String, creatorClientId: String) -> [UInt8] {
        var out: [UInt8] = []
        for line in [domain, conversationId, inviteId, secret, creatorEndpoint, creatorClientId] {
            out.append(contentsOf: line.utf8)
            out.append(0x0a)
        }
        return out
    }

    /// The text to share.
    public var code: String {
        var object: JSONObject = [
            "conversationId": .string(conversationId), "topic": .string(topic), "name": .string(name),
            "creatorInboxId": .string(creatorInboxId), "creatorPublicKey": .string(creatorPublicKey),
            "creatorEndpoint": .string(creatorEndpoint), "creatorClientId": .string(creatorClientId),
            "inviteId": .string(inviteId), "secret": .string(secret),
        ]
        if let expiresAtMs { object.set("expiresAtMs", .int(expiresAtMs)) }
        object.set("signature", .string(signature))
        return Self.prefix + Base64URL.encode(JSONWriter.bytes(.object(object)))
    }

    // MARK: - Parsing

    /// Checks shape, the signature against `creatorPublicKey`, that `creatorInboxId` is its
    /// hash, that the topic names the conversation, and expiry against `nowMs`.
    public static func parse(_ text: String, nowMs: Int64 = WallClock.nowMs()) throws(InviteError) -> InviteCode {
        guard text.utf8.count <= maxCharacters else { throw .tooLarge }
        guard text.hasPrefix(prefix), let json = Base64URL.decode(String(text.dropFirst(prefix.count))) else {
            throw .notAnInvite
        }
        guard let value = try? JSONParser.parse(json, limits: .init(maxBytes: maxCharacters, maxDepth: 4, beyondMaxDepth: .skip)),
              value.object != nil
        else { throw .notAnInvite }
        func field(_ key: String) throws(InviteError) -> String {
            guard let text = value[key]?.string else { throw .malformed("\(key) is missing or not a string") }
            return text
        }
        var expiresAtMs: Int64?
        switch value["expiresAtMs"] {
        case nil, .null?: expiresAtMs = nil
        case .int(let ms)?: expiresAtMs = ms
        default: throw .malformed("expiresAtMs is not an integer")
        }
        let invite = InviteCode(
            conversationId: try field("conversationId"), topic: try field("topic"), name: try field("name"),
            creatorInboxId: try field("creatorInboxId"), creatorPublicKey: try field("creatorPublicKey"),
            creatorEndpoint: try field("creatorEndpoint"), creatorClientId: try field("creatorClientId"),
            inviteId: try field("inviteId"), secret: try field("secret"), expiresAtMs: expiresAtMs,
            signature: try field("signature"))
        try invite.validateFields()
        try invite.verify()
        if let expiresAtMs, nowMs >= expiresAtMs { throw .expired }
        return invite
    }

    func validateFields() throws(InviteError) {
        guard ProtocolIds.isId16(conversationId) else { throw .malformed("conversationId") }
        guard topic == ProtocolIds.topic(conversationId: conversationId) else { throw .malformed("topic does not name the conversation") }
        guard name.utf8.count <= Self.maxNameBytes else { throw .malformed("name is too long") }
        guard ProtocolIds.isInboxId(creatorInboxId) else { throw .malformed("creatorInboxId") }
        guard Hex.isCanonical(creatorPublicKey, byteCount: PublicKey.byteCount) else { throw .malformed("creatorPublicKey") }
        guard ProtocolIds.isEndpoint(creatorEndpoint) else { throw .malformed("creatorEndpoint") }
        guard ProtocolIds.isClientId(creatorClientId) else { throw .malformed("creatorClientId") }
        guard MessageContent.isSecretHex(inviteId) else { throw .malformed("inviteId") }
        guard MessageContent.isSecretHex(secret) else { throw .malformed("secret") }
        guard Hex.isCanonical(signature, byteCount: 64) else { throw .malformed("signature") }
    }

    func verify() throws(InviteError) {
        guard let key = try? PublicKey(hex: creatorPublicKey) else { throw .badSignature }
        guard key.inboxId == creatorInboxId else { throw .badSignature }
        let digest = SHA256.hash(Self.signingInput(conversationId: conversationId, inviteId: inviteId, secret: secret,
                                                   creatorEndpoint: creatorEndpoint, creatorClientId: creatorClientId))
        guard let signatureBytes = Hex.decode(signature, count: 64), key.isValidSignature(signatureBytes, digest: digest)
        else { throw .badSignature }
    }
}
