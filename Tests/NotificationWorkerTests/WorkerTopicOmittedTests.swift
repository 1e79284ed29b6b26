import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// A push through a relay omits its topic (PROTOCOL §2, 1.1): the real worker takes the
/// conversation of the recipient identity, and refuses when it has none or the envelope was
/// sealed for another topic, writing nothing.
@Suite("Worker: pushes without a topic")
struct WorkerTopicOmittedTests {
    private func fixture() throws -> WorkerFixture {
        try WorkerFixture(vectors: try #require(try Vectors.load()))
    }

    @Test("a push without a topic is stored in the identity's one conversation", arguments: DeliveryMode.allCases)
    func stored(mode: DeliveryMode) throws {
        let f = try fixture()
        let push = try f.sealTextForRelay("through the relay")
        #expect(!String(decoding: push.payload, as: UTF8.self).contains("topic"))
        #expect(try WorkerRun.deliver(push.payload, mode: mode, fixture: f) == .ok(messageId: push.messageId, duplicate: false))
        let stored = try #require(try f.message(id: push.messageId))
        #expect(stored.conversationId == f.recipient.conversationId)
        #expect(stored.content == Array("through the relay".utf8))
    }

    @Test("sealed for another topic: decrypt_failed, nothing written")
    func wrongSealedTopic() throws {
        let f = try fixture()
        let push = try f.sealTextForRelay("x", sealedTopic: ProtocolIds.topic(conversationId: Hex.encode(SecureRandom.bytes(16))))
        let before = try f.tableContents()
        let ack = try WorkerRun.deliver(push.payload, mode: .payloadStdin, fixture: f)
        #expect(WorkerRun.errorCode(ack) == "decrypt_failed", "\(ack)")
        #expect(try f.tableContents() == before)
    }

    @Test("an identity with no conversation yet (the unused inbox): unknown_conversation, nothing written")
    func noConversation() throws {
        let f = try fixture()
        let fresh = Identity.generate()
        let keystore = try Keystore(directory: f.group.keystorePath, environment: [:])
        try keystore.save(fresh)
        let conn = try f.open()
        try conn.immediateTransaction { () throws(InboxWriteError) in
            try InboxWriter.save(inboxId: fresh.inboxId, clientId: fresh.clientId, now: f.now, on: conn)
        }
        let topic = ProtocolIds.topic(conversationId: f.recipient.conversationId)
        let signed = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: f.recipient.conversationId,
                                        sentAtMs: f.now, contentType: ContentType.text, content: Array("hi".utf8),
                                        fallback: nil, signer: f.senderKey)
        let envelope = Envelope.seal(signed.encode(), recipient: fresh.privateKey.publicKey, clientId: fresh.clientId, topic: topic)
        let payload = PushPayload(clientId: fresh.clientId, topic: nil, envelope: envelope).encode()
        let before = try f.tableContents()
        let ack = try WorkerRun.deliver(payload, mode: .payloadStdin, fixture: f)
        #expect(WorkerRun.errorCode(ack) == "unknown_conversation", "\(ack)")
        #expect(try f.tableContents() == before)
    }
}
