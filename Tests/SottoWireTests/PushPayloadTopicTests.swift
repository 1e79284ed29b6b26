import SottoCrypto
import SottoWire
import Testing

/// PROTOCOL §2 (version 1.1): `notificationData.topic` may be omitted (a push through a
/// relay); when present it is checked as before.
@Suite("Push payload without a topic")
struct PushPayloadTopicTests {
    private let clientId = "a28b86c6-c3b9-444b-829e-dac9b60cca19"

    @Test("a payload without a topic (or with topic null) decodes with topic nil and re-encodes without one")
    func omitted() throws {
        for text in [#"{"version":1,"clientId":"\#(clientId)","notificationData":{"envelope":"AQID"}}"#,
                     #"{"version":1,"clientId":"\#(clientId)","notificationData":{"topic":null,"envelope":"AQID"}}"#] {
            let push = try PushPayload.decode(Array(text.utf8))
            #expect(push.topic == nil)
            #expect(push.conversationId == nil)
            #expect(push.envelope == [1, 2, 3])
            let again = String(decoding: push.encode(), as: UTF8.self)
            #expect(!again.contains("topic"))
            #expect(try PushPayload.decode(push.encode()) == push)
        }
    }

    @Test("a topic that is present must still be /sotto/1/c/<32 hex>", arguments: [
        #""topic":"""#, #""topic":"/sotto/1/c/zz""#, #""topic":5"#, #""topic":{}"#, #""topic":"/sotto/1/c/\#(String(repeating: "A", count: 32))""#,
    ])
    func malformedTopic(topic: String) {
        let text = #"{"version":1,"clientId":"\#(clientId)","notificationData":{\#(topic),"envelope":"AQID"}}"#
        #expect { try PushPayload.decode(Array(text.utf8)) } throws: { ($0 as? PushError)?.code == .malformedPayload }
    }

    @Test("without a topic the opener asks for the identity's one conversation; none is unknown_conversation")
    func openerAsksForTheTopic() throws {
        let identity = Identity.generate()
        let conversationId = Hex.encode(SecureRandom.bytes(16))
        let topic = ProtocolIds.topic(conversationId: conversationId)
        let author = PrivateKey.generate()
        let signed = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: conversationId,
                                        sentAtMs: 1, contentType: ContentType.text, content: Array("hi".utf8),
                                        fallback: nil, signer: author)
        let envelope = Envelope.seal(signed.encode(), recipient: identity.privateKey.publicKey,
                                     clientId: identity.clientId, topic: topic)
        let bytes = PushPayload(clientId: identity.clientId, topic: nil, envelope: envelope).encode()
        var asked: [String] = []
        let opened = try PushOpener.open(bytes, identityForClientId: { _ throws(KeystoreError) in identity },
                                         topicForClientId: { (clientId) throws(PushError) in asked.append(clientId); return topic })
        #expect(asked == [identity.clientId])
        #expect(opened.topic == topic)
        #expect(opened.message.id == signed.id)

        #expect { try PushOpener.open(bytes, identityForClientId: { _ throws(KeystoreError) in identity }) }
            throws: { ($0 as? PushError)?.code == .unknownConversation }
        let otherTopic = ProtocolIds.topic(conversationId: Hex.encode(SecureRandom.bytes(16)))
        #expect { try PushOpener.open(bytes, identityForClientId: { _ throws(KeystoreError) in identity },
                                      topicForClientId: { _ throws(PushError) in otherTopic }) }
            throws: { ($0 as? PushError)?.code == .decryptFailed }
    }
}
