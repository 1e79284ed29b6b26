import SottoWire

/// A push that decoded, decrypted, parsed and verified. Membership and conversation state are
/// still to be checked against the database by the store writer.
public struct OpenedPush: Sendable {
    public let payload: PushPayload
    /// The topic the envelope was opened with: the payload's, or (when the payload omitted
    /// it, PROTOCOL §2) the one conversation of the recipient's identity.
    public let topic: String
    public let recipientInboxId: String
    public let message: SignedMessage
    /// What is stored: the message's own content type, bytes and fallback, or, for a body by
    /// reference (docs/protocol/bodies.md), the inner ones from the opened body.
    public let contentType: String
    public let contentBytes: [UInt8]
    public let fallback: String?
    public let content: MessageContent
    /// The reference the content came through, nil for an inline content.
    public let body: BodyReference?
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
        try open(PushPayload.decode(bytes), body: nil, identityForClientId: lookup, topicForClientId: topicLookup)
    }

    /// A decoded payload and the body bytes that followed it on the stream (nil: none came).
    /// A payload that names a body and none came is `body_missing`; the body is checked against
    /// the signed reference before its content is decoded (docs/protocol/bodies.md §7).
    public static func open(
        _ payload: PushPayload, body: [UInt8]?, identityForClientId lookup: (String) throws(KeystoreError) -> Identity,
        topicForClientId topicLookup: (String) throws(PushError) -> String? = { _ in nil }
    ) throws(PushError) -> OpenedPush {
        if payload.body != nil, body == nil { throw PushError(.bodyMissing, "the push names a body and none came") }
        let (message, topic, identity) = try openSigned(payload, identityForClientId: lookup, topicForClientId: topicLookup)
        guard (message.contentType == ContentType.body) == (payload.body != nil) else {
            throw PushError(.bodyMismatch, payload.body == nil ? "the message references a body the push does not name"
                                                                : "the push names a body its message does not reference")
        }
        guard let hint = payload.body, let body else {
            let content = try MessageContent.decode(
                contentType: message.contentType, content: message.contentBytes, fallback: message.fallback)
            return OpenedPush(payload: payload, topic: topic, recipientInboxId: identity.inboxId, message: message,
                              contentType: message.contentType, contentBytes: message.contentBytes,
                              fallback: message.fallback, content: content, body: nil)
        }
        let reference = try BodyReference.decode(message.contentBytes)
        let inner = try reference.open(body, hint: hint)
        let content = try MessageContent.decode(contentType: reference.contentType, content: inner, fallback: reference.fallback)
        return OpenedPush(payload: payload, topic: topic, recipientInboxId: identity.inboxId, message: message,
                          contentType: reference.contentType, contentBytes: inner, fallback: reference.fallback,
                          content: content, body: reference)
    }

    /// Steps 4 of docs/protocol/bodies.md §7 alone: the identity, the envelope, the signature
    /// and the conversation, whatever the content and whether or not a body came. What a
    /// failed receipt needs to know who to tell (docs/protocol/receipts.md §4).
    public static func openSigned(
        _ payload: PushPayload, identityForClientId lookup: (String) throws(KeystoreError) -> Identity,
        topicForClientId topicLookup: (String) throws(PushError) -> String? = { _ in nil }
    ) throws(PushError) -> (message: SignedMessage, topic: String, identity: Identity) {
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
        return (message, topic, identity)
    }
}
