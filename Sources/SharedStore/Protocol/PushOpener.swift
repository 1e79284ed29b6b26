/// A push that decoded, decrypted, parsed and verified. Membership and conversation state are
/// still to be checked against the database by the store writer.
public struct OpenedPush: Sendable {
    public let payload: PushPayload
    public let recipientInboxId: String
    public let message: SignedMessage
    public let content: MessageContent
}

/// Payload bytes → verified message, or the `PushError` the ack should carry. Pure: the
/// keystore is reached through a lookup closure, and no database is touched.
///
/// ```swift
/// let opened = try PushOpener.open(bytes) { (clientId) throws(KeystoreError) in
///     try keystore.identity(clientId: clientId)
/// }
/// ```
public enum PushOpener {
    public static func open(
        _ bytes: [UInt8], identityForClientId lookup: (String) throws(KeystoreError) -> Identity
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
        let plaintext = try Envelope.open(
            payload.envelope, recipientKey: identity.privateKey, clientId: payload.clientId, topic: payload.topic)
        let message = try SignedMessage.parse(plaintext)
        try message.verify()
        guard message.conversationId == payload.conversationId else {
            throw PushError(.unknownConversation, "message conversation does not match the topic")
        }
        let content = try MessageContent.decode(
            contentType: message.contentType, content: message.contentBytes, fallback: message.fallback)
        return OpenedPush(payload: payload, recipientInboxId: identity.inboxId, message: message, content: content)
    }
}
