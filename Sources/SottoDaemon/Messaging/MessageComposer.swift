import SharedStore

/// Turns one message into what the outbox delivers: signed once by the conversation's
/// identity (PROTOCOL §4), then sealed separately for each other member's public key,
/// clientId and the conversation's topic (§3), each in its own push payload (§2; without the
/// topic when the member's endpoint is a relay).
///
/// ```swift
/// let composed = MessageComposer.compose(contentType: ContentType.text, content: Array("hi".utf8),
///                                        fallback: nil, conversation: conv, members: members,
///                                        sender: identity, now: now)
/// try OutgoingMessageWriter.insert(composed.outgoing, pushes: composed.pushes, now: now, on: conn)
/// ```
enum MessageComposer {
    struct Composed: Sendable {
        let signed: SignedMessage
        let outgoing: OutgoingMessage
        let pushes: [OutboxEntry]
    }

    static func compose(contentType: String, content: [UInt8], fallback: String?, referenceId: String? = nil,
                        conversation: DBConversation, members: [DBMember], sender: Identity,
                        now: Int64, id: String = Hex.encode(SecureRandom.bytes(16))) -> Composed {
        let signed = SignedMessage.sign(id: id, conversationId: conversation.id, sentAtMs: now,
                                        contentType: contentType, content: content, fallback: fallback,
                                        signer: sender.privateKey)
        let plaintext = signed.encode()
        let pushes = members.compactMap { member -> OutboxEntry? in
            guard member.inboxId != sender.inboxId, let key = try? PublicKey(hex: member.publicKey) else { return nil }
            let envelope = Envelope.seal(plaintext, recipient: key, clientId: member.clientId, topic: conversation.topic)
            let payload = PushPayload(clientId: member.clientId, topic: Self.visibleTopic(conversation.topic, endpoint: member.endpoint),
                                      envelope: envelope)
            return OutboxEntry(memberInboxId: member.inboxId, endpoint: member.endpoint, payload: payload.encode())
        }
        let outgoing = OutgoingMessage(id: id, conversationId: conversation.id, senderInboxId: sender.inboxId,
                                       sentAtMs: now, contentType: contentType, content: content,
                                       fallback: fallback, referenceId: referenceId)
        return Composed(signed: signed, outgoing: outgoing, pushes: pushes)
    }

    /// One push for a single recipient that is not (yet) a member, e.g. a join request to
    /// an invite's creator.
    static func sealOne(_ signed: SignedMessage, to publicKey: PublicKey, clientId: String, topic: String,
                        endpoint: String) -> [UInt8] {
        let envelope = Envelope.seal(signed.encode(), recipient: publicKey, clientId: clientId, topic: topic)
        return PushPayload(clientId: clientId, topic: visibleTopic(topic, endpoint: endpoint), envelope: envelope).encode()
    }

    /// The topic as the push shows it: omitted for a push through a relay, which is to learn
    /// the mailbox and nothing else (PROTOCOL §2 1.1); the envelope is sealed with it either way.
    static func visibleTopic(_ topic: String, endpoint: String) -> String? {
        RelayPublisher.isRelayEndpoint(endpoint) ? nil : topic
    }
}
