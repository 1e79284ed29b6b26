@testable import DaemonEngine
import SharedStore
import SottoCrypto
import SottoWire
import Testing

/// The composer's choice between inline and by reference (docs/protocol/bodies.md,
/// docs/adr/0032), checked by opening what it made with each recipient's key, as a worker does.
@Suite("Message composer: inline or by reference")
struct MessageComposerTests {
    struct Setup {
        let sender = Identity.generate()
        let recipients = [Identity.generate(), Identity.generate()]
        let conversation: DBConversation
        let members: [DBMember]

        init(relayFor second: Bool = false) {
            let id = Hex.encode(SecureRandom.bytes(16))
            conversation = DBConversation(id: id, inboxId: sender.inboxId, clientId: sender.clientId,
                                          topic: ProtocolIds.topic(conversationId: id), name: "Trip",
                                          creatorInboxId: sender.inboxId, createdAt: 1)
            var members = [DBMember(conversationId: id, inboxId: sender.inboxId, publicKey: sender.publicKey.hex,
                                    endpoint: "unix:/run/a.sock", clientId: sender.clientId, role: .creator)]
            for (index, identity) in recipients.enumerated() {
                members.append(DBMember(conversationId: id, inboxId: identity.inboxId, publicKey: identity.publicKey.hex,
                                        endpoint: second && index == 1 ? "nats://relay.example:4222" : "unix:/run/b\(index).sock",
                                        clientId: identity.clientId, role: .member))
            }
            self.members = members
        }

        func compose(_ content: [UInt8], as contentType: String = ContentType.text, fallback: String? = nil) throws
            -> MessageComposer.Composed {
            try MessageComposer.compose(contentType: contentType, content: content, fallback: fallback,
                                        conversation: conversation, members: members, sender: sender, now: 1_000)
        }

        /// What recipient `index` opens from its push.
        func open(_ composed: MessageComposer.Composed, _ index: Int) throws -> (PushPayload, SignedMessage) {
            let identity = recipients[index]
            let entry = try #require(composed.pushes.first { $0.memberInboxId == identity.inboxId })
            let push = try PushPayload.decode(entry.payload)
            // The outbox row keeps the address the push names, so the outbox never decodes it (schema v13).
            #expect(entry.clientId == identity.clientId && entry.clientId == push.clientId)
            #expect(entry.bodyId == push.body?.id)
            let plaintext = try Envelope.open(push.envelope, recipientKey: identity.privateKey, clientId: identity.clientId,
                                              topic: conversation.topic)
            let signed = try SignedMessage.parse(plaintext)
            try signed.verify()
            return (push, signed)
        }
    }

    @Test("a short text goes inline to every member, with no body")
    func shortTextInline() throws {
        let setup = Setup()
        let composed = try setup.compose(Array("train at 9?".utf8))
        #expect(composed.body == nil)
        #expect(composed.pushes.count == 2)
        for index in 0..<2 {
            let (push, signed) = try setup.open(composed, index)
            #expect(push.body == nil)
            #expect(signed.contentType == ContentType.text)
            #expect(signed.contentBytes == Array("train at 9?".utf8))
        }
    }

    @Test("the size check is exact: the longest inline text fills a push, one byte more goes by reference")
    func boundaryIsExact() throws {
        let setup = Setup(relayFor: true)   // one push with the topic, one without
        // Find the longest text that the composer still sends inline.
        var low = 1, high = 4096
        while low < high {
            let mid = (low + high + 1) / 2
            if try setup.compose(Array(repeating: UInt8(ascii: "a"), count: mid)).body == nil { low = mid } else { high = mid - 1 }
        }
        let inline = try setup.compose(Array(repeating: UInt8(ascii: "a"), count: low))
        #expect(inline.body == nil)
        #expect(inline.pushes.map(\.payload.count).max() ?? 0 <= PushPayload.maxBytes)
        // With the topic the push is the larger one; its size lands within one base64 step of the limit.
        #expect(inline.pushes.map(\.payload.count).max() ?? 0 > PushPayload.maxBytes - 4)
        for (index, identity) in setup.recipients.enumerated() {
            let push = try #require(inline.pushes.first { $0.memberInboxId == identity.inboxId })
            let member = try #require(setup.members.first { $0.inboxId == identity.inboxId })
            let plaintext = try setup.open(inline, index).1.encode()
            #expect(MessageComposer.inlinePushBytes(plaintext: plaintext.count, member: member, topic: setup.conversation.topic)
                    == push.payload.count)
        }
        let over = try setup.compose(Array(repeating: UInt8(ascii: "a"), count: low + 1))
        #expect(over.body != nil)
        #expect(over.pushes.allSatisfy { (try? PushPayload.decode($0.payload))?.body != nil })
    }

    @Test("a 64 KiB text: sealed once, every member's push a signed reference to that one body")
    func longTextByReference() throws {
        let setup = Setup(relayFor: true)
        let text = Array(String(repeating: "é\u{1}  \"\\\n", count: 65_536 / 8).utf8)
        #expect(text.count == 65_536)
        let composed = try setup.compose(text)
        let body = try #require(composed.body)
        #expect(composed.outgoing.content == text)                  // the row keeps the plaintext
        #expect(composed.outgoing.contentType == ContentType.text)
        for index in 0..<2 {
            let (push, signed) = try setup.open(composed, index)
            #expect(signed.contentType == ContentType.body)
            #expect(signed.fallback == BodyReference.outerFallback)
            #expect(signed.id == composed.outgoing.id)
            let reference = try BodyReference.decode(signed.contentBytes)
            #expect(reference.contentType == ContentType.text)
            #expect(push.body == reference.hint)
            #expect(reference.id == Hex.encode(body.id))
            #expect(try reference.open(body.sealed, hint: try #require(push.body)) == text)
        }
        #expect(composed.pushes.allSatisfy { $0.payload.count <= PushPayload.maxBytes })
    }

    @Test("a reply with a 30 KB quote: by reference, its fallback cut to what a reference carries")
    func longReplyFallbackBounded() throws {
        let setup = Setup()
        let quote = String(repeating: "ü", count: 15_000)            // 30,000 bytes
        let content = JSONWriter.bytes(["reference": .string(String(repeating: "ab", count: 16)), "text": .string(quote)])
        let composed = try setup.compose(content, as: ContentType.reply, fallback: quote)
        #expect(composed.body != nil)
        let reference = try BodyReference.decode(try setup.open(composed, 0).1.contentBytes)
        #expect(reference.contentType == ContentType.reply)
        #expect(reference.fallback == String(repeating: "ü", count: BodyReference.maxFallbackBytes / 2))
    }

    @Test("what cannot be made to fit is refused, not composed")
    func refusals() throws {
        let setup = Setup()
        #expect(throws: MessageComposer.Failure.contentTooLarge(bytes: BodySize.maxContentBytes + 1)) {
            try setup.compose(Array(repeating: 0x61, count: BodySize.maxContentBytes + 1))
        }
        let request = Array(repeating: UInt8(ascii: "a"), count: 5_000)
        #expect {
            try setup.compose(request, as: ContentType.joinRequest)
        } throws: { error in
            if case MessageComposer.Failure.notByReference(ContentType.joinRequest, _)? = error as? MessageComposer.Failure { return true }
            return false
        }
    }

    @Test("a conversation of one sends no push and needs no body")
    func aloneNoBody() throws {
        let setup = Setup()
        let composed = try MessageComposer.compose(contentType: ContentType.text, content: Array(repeating: 0x61, count: 65_536),
                                                   fallback: nil, conversation: setup.conversation,
                                                   members: [setup.members[0]], sender: setup.sender, now: 1)
        #expect(composed.pushes.isEmpty)
        #expect(composed.body == nil)
    }

    @Test("prefix cuts between characters")
    func prefixCutsBetweenCharacters() {
        #expect(MessageComposer.prefix("aé€😀", bytes: 4) == "aé")
        #expect(MessageComposer.prefix("short", bytes: 256) == "short")
    }
}
