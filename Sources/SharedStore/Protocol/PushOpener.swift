/// A push that decoded, decrypted, parsed and verified. Membership and conversation state are
/// still to be checked against the database by the store writer.
public struct OpenedPush: Sendable {
    public let payload: PushPayload
    /// The topic the envelope was opened with: the payload's, or (when the payload omitted
    /// it, PROTOCOL §2) the one conversation of the recipient's identity.
    public let topic: String
    public let recipientInboxId: String
    public let message: SignedMessage
    public let content: MessageContent
}

/// Payload bytes → verified message, or the `PushError` the ack should carry. Pure: the
/// keystore and (only for a push without a topic) the identity's conversation are reached
/// through lookup closures, and no database is touched here.
///
/// ```swift
/// let opened = try PushOpener.open(bytes, identityForClientId: { (clientId) throws(KeystoreError) in
///     try keystore.identity(clientId: clientId)
/// }, topicForClientId: { (clientId) throws(PushError) in
///     try topicOfTheOneConversation(clientId)          // nil: none (the unused inbox) or ambiguous
/// })
/// ```
public enum PushOpener {
    public static func open(
        _ bytes: [UInt8], identityForClientId lookup: (String) throws(KeystoreError) -> Identity,
        topicForClientId topicLookup: (String) throws(PushError) -> String? = { _ in nil }
    ) throws(PushError) -> OpenedPush {
        let payload = try PushPayload.decode(bytes)
        let identity: Identity
        do {
            identity = try lookup(payload.clientId)
        } catch .missing {
            throw PushError(.unknownClient, "no identity for this clientId")
        } catch {
            throw PushError(.internal, "\(error)")
        }
        guard identity.clientId == payload.clientId else {
            throw PushError(.internal, "keystore returned another identity")
        }
        // The AAD always holds the real topic (PROTOCOL §3): without one in the payload, the
        // identity's one conversation names it; an identity with none cannot take the push.
        var topic = payload.topic
        if topic == nil { topic = try topicLookup(payload.clientId) }
        guard let topic, let conversationId = ProtocolIds.conversationId(fromTopic: topic) else {
            throw PushError(.unknownConversation, "no topic in the push and no single conversation for this clientId")
        }
        let plaintext = try Envelope.open(
            payload.envelope, recipientKey: identity.privateKey, clientId: payload.clientId, topic: topic)
        let message = try SignedMessage.parse(plaintext)
        try message.verify()
        guard message.conversationId == conversationId else {
            throw PushError(.unknownConversation, "message conversation does not match the topic")
        }
        let content = try MessageContent.decode(
            contentType: message.contentType, content: message.contentBytes, fallback: message.fallback)
        return OpenedPush(payload: payload, topic: topic, recipientInboxId: identity.inboxId, message: message,
                          content: content)
    }
}
