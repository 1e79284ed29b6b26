/// The push of PROTOCOL §2: at most 4096 bytes of JSON naming the recipient's clientId, the
/// conversation topic (optional since version 1.1: a push through a relay omits it, and the
/// recipient takes its identity's one conversation) and the sealed envelope.
///
/// ```swift
/// let push = try PushPayload.decode(bytes)         // throws PushError with the §2 code
/// push.clientId; push.topic; push.envelope         // topic nil when omitted; envelope base64url-decoded
/// let again = push.encode()                        // compact JSON, envelope unpadded
/// ```
public struct PushPayload: Sendable, Equatable {
    public static let maxBytes = PushFrameLimits.maxPayloadBytes
    public static let version: Int64 = 1

    public let clientId: String
    /// nil when the sender omitted it (a push through a relay: PROTOCOL §2).
    public let topic: String?
    public let envelope: [UInt8]
    /// The sealed body that follows the payload on the stream (docs/protocol/bodies.md §5),
    /// nil for a push that carries everything.
    public let body: BodyHint?

    public init(clientId: String, topic: String?, envelope: [UInt8], body: BodyHint? = nil) {
        self.clientId = clientId
        self.topic = topic
        self.envelope = envelope
        self.body = body
    }

    /// The conversation id the topic names, nil when the topic was omitted.
    public var conversationId: String? { topic.flatMap { ProtocolIds.conversationId(fromTopic: $0) } }

    public static func decode<Bytes: Collection>(_ bytes: Bytes) throws(PushError) -> PushPayload where Bytes.Element == UInt8 {
        guard bytes.count <= maxBytes else {
            throw PushError(.payloadTooLarge, "payload is \(bytes.count) bytes, the limit is \(maxBytes)")
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes, limits: .init(maxBytes: maxBytes, maxDepth: 8, beyondMaxDepth: .skip))
        } catch {
            throw PushError(.malformedPayload, "payload is not valid JSON (\(error))")
        }
        guard value.object != nil else { throw PushError(.malformedPayload, "payload is not a JSON object") }
        guard let version = value["version"]?.int64 else {
            throw PushError(.malformedPayload, "version is missing or not an integer")
        }
        guard version == Self.version else {
            throw PushError(.unsupportedVersion, "payload version \(version) is not supported")
        }
        guard let clientId = value["clientId"]?.string, ProtocolIds.isClientId(clientId) else {
            throw PushError(.malformedPayload, "clientId is missing or not a lowercase UUID")
        }
        guard let data = value["notificationData"], data.object != nil else {
            throw PushError(.malformedPayload, "notificationData is missing or not an object")
        }
        // Omitted (or null): the recipient takes its identity's conversation (PROTOCOL §2).
        var topic: String?
        if let value = data["topic"], !value.isNull {
            guard let text = value.string, ProtocolIds.conversationId(fromTopic: text) != nil else {
                throw PushError(.malformedPayload, "topic is not /sotto/1/c/<32 hex>")
            }
            topic = text
        }
        guard let envelopeText = data["envelope"]?.string else {
            throw PushError(.malformedPayload, "envelope is missing or not a string")
        }
        guard let envelope = Base64URL.decode(envelopeText), !envelope.isEmpty else {
            throw PushError(.malformedPayload, "envelope is not base64url")
        }
        return PushPayload(clientId: clientId, topic: topic, envelope: envelope, body: try bodyHint(data["body"]))
    }

    /// `notificationData.body` (docs/protocol/bodies.md §7, steps 1–2).
    private static func bodyHint(_ value: JSONValue?) throws(PushError) -> BodyHint? {
        guard let value, !value.isNull else { return nil }
        guard value.object != nil, let id = value["id"]?.string, ProtocolIds.isId16(id),
              let length = value["length"]?.int64
        else { throw PushError(.malformedPayload, "body is not an object with a 32-hex id and an integer length") }
        guard length <= Int64(BodySize.maxSealedBytes) else {
            throw PushError(.payloadTooLarge, "body is \(length) bytes, the limit is \(BodySize.maxSealedBytes)")
        }
        guard BodySize.isValidLength(length) else {
            throw PushError(.malformedPayload, "body length \(length) is not 4096·b + 16 for a size bucket b")
        }
        return BodyHint(id: id, length: length)
    }

    public func encode() -> [UInt8] {
        var data = JSONObject()
        if let topic { data.set("topic", .string(topic)) }
        data.set("envelope", .string(Base64URL.encode(envelope)))
        if let body { data.set("body", ["id": .string(body.id), "length": .int(body.length)]) }
        return JSONWriter.bytes([
            "version": .int(Self.version),
            "clientId": .string(clientId),
            "notificationData": .object(data),
            "apiJWT": nil,
        ])
    }
}
