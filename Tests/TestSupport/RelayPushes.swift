import SottoCrypto
import SottoWire

/// Pushes as a sender writes them for a relay (PROTOCOL §2, version 1.1): no
/// `notificationData.topic`, so the relay sees only the clientId. The envelope is still
/// sealed with the conversation's real topic in its AAD.
///
/// ```swift
/// let push = try fixture.sealTextForRelay("hi")   // {"version":1,"clientId":…,"notificationData":{"envelope":…}}
/// ```
extension WorkerFixture {
    public func sealTextForRelay(_ text: String, id: String = Hex.encode(SecureRandom.bytes(16)),
                                 sealedTopic: String? = nil) throws -> Push {
        let message = SignedMessage.sign(id: id, conversationId: recipient.conversationId, sentAtMs: now,
                                         contentType: ContentType.text, content: Array(text.utf8), fallback: nil,
                                         signer: senderKey)
        let recipientKey = try PrivateKey(bytes: recipient.privateKey).publicKey
        let envelope = Envelope.seal(message.encode(), recipient: recipientKey, clientId: recipient.clientId,
                                     topic: sealedTopic ?? recipient.topic)
        return Push(messageId: id, payload: PushPayload(clientId: recipient.clientId, topic: nil, envelope: envelope).encode())
    }
}
