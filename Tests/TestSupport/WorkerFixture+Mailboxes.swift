import SharedStore
import SottoCrypto
import SottoWire

/// More identities in one fixture's device, each with a conversation of its own that the
/// fixture's `sender` is a member of, so a test or benchmark can seal valid pushes into many
/// mailboxes of one device (sotto-relayd then consumes each on its own connection,
/// docs/adr/0044).
///
/// ```swift
/// let boxes = try fixture.addMailboxes(19)          // plus the fixture's own recipient
/// let push = try fixture.sealText("hi", to: boxes[3])
/// ```
extension WorkerFixture {
    public struct ExtraMailbox: Sendable {
        public let clientId: String
        public let conversationId: String
        public let publicKey: PublicKey
    }

    public func addMailboxes(_ count: Int) throws -> [ExtraMailbox] {
        let keystore = try Keystore(directory: group.keystorePath, environment: [:], createIfMissing: true)
        let conn = try open()
        var boxes: [ExtraMailbox] = []
        for index in 0..<count {
            let key = PrivateKey.generate()
            let clientId = SecureRandom.uuidV4()
            let identity = Identity(clientId: clientId, privateKey: key, databaseKey: SecretBytes(SecureRandom.bytes(32)),
                                    createdAtMs: now)
            try keystore.save(identity)
            contentKeys.remember(identity)   // the conversation's name is written sealed (docs/adr/0052)
            let conversationId = Hex.encode(SecureRandom.bytes(16))
            let members = [
                MemberEntry(inboxId: key.publicKey.inboxId, publicKey: key.publicKey.hex, endpoint: "unix:/tmp/self-\(index).sock",
                            clientId: clientId, profileName: nil),
                MemberEntry(inboxId: senderKey.publicKey.inboxId, publicKey: senderKey.publicKey.hex,
                            endpoint: "unix:/tmp/sam.sock", clientId: SecureRandom.uuidV4(), profileName: senderProfileName),
            ]
            let new = NewConversation(id: conversationId, inboxId: key.publicKey.inboxId, name: "Box \(index)",
                                      creatorInboxId: key.publicKey.inboxId, state: .active, createdAt: now, members: members)
            try conn.immediateTransaction { () throws(InboxWriteError) in
                try InboxWriter.save(inboxId: key.publicKey.inboxId, clientId: clientId, now: now, on: conn)
                try InboxWriter.createConversation(new, on: conn)
            }
            boxes.append(ExtraMailbox(clientId: clientId, conversationId: conversationId, publicKey: key.publicKey))
        }
        return boxes
    }

    /// A text from `sender` into `box`, as a sender writes it for a relay (no topic in clear).
    public func sealText(_ text: String, to box: ExtraMailbox, id: String = Hex.encode(SecureRandom.bytes(16))) throws -> Push {
        let message = SignedMessage.sign(id: id, conversationId: box.conversationId, sentAtMs: now,
                                         contentType: ContentType.text, content: Array(text.utf8), fallback: nil,
                                         signer: senderKey)
        let envelope = Envelope.seal(message.encode(), recipient: box.publicKey, clientId: box.clientId,
                                     topic: DBConversation.topic(for: box.conversationId))
        return Push(messageId: id, payload: PushPayload(clientId: box.clientId, topic: nil, envelope: envelope).encode())
    }
}
