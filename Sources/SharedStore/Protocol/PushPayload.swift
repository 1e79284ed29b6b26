/// The push of PROTOCOL §2: at most 4096 bytes of JSON naming the recipient's clientId, the
/// conversation topic and the sealed envelope.
///
/// ```swift
/// let push = try PushPayload.decode(bytes)         // throws PushError with the §2 code
/// push.clientId; push.topic; push.envelope         // envelope already base64url-decoded
/// let again = push.encode()                        // compact JSON, envelope unpadded
/// ```
public struct PushPayload: Sendable, Equatable {
    public static let maxBytes = 4096
    public static let version: Int64 = 1

    public let clientId: String
    public let topic: String
    public let envelope: [UInt8]

    public init(clientId: String, topic: String, envelope: [UInt8]) {
        self.clientId = clientId
        self.topic = topic
        self.envelope = envelope
    }

    /// The conversation id the topic names.
    public var conversationId: String { ProtocolIds.conversationId(fromTopic: topic) ?? "" }

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
        guard let topic = data["topic"]?.string, ProtocolIds.conversationId(fromTopic: topic) != nil else {
            throw PushError(.malformedPayload, "topic is missing or not /sotto/1/c/<32 hex>")
        }
        guard let envelopeText = data["envelope"]?.string else {
            throw PushError(.malformedPayload, "envelope is missing or not a string")
        }
        guard let envelope = Base64URL.decode(envelopeText), !envelope.isEmpty else {
            throw PushError(.malformedPayload, "envelope is not base64url")
        }
        return PushPayload(clientId: clientId, topic: topic, envelope: envelope)
    }

    public func encode() -> [UInt8] {
        JSONWriter.bytes([
            "version": .int(Self.version),
            "clientId": .string(clientId),
            "notificationData": ["topic": .string(topic), "envelope": .string(Base64URL.encode(envelope))],
            "apiJWT": nil,
        ])
    }
}
