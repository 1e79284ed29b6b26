import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Random and mutated inputs to every parser: each call must return a value or a typed error
/// (a trap would kill the test process), and whatever parses must survive a re-encode.
@Suite("Parser fuzz")
struct ParserFuzzTests {
    func mutate(_ input: [UInt8], _ rng: inout SeededGenerator) -> [UInt8] { rng.mutate(input) }

    @Test func everyParserFailsCleanly() throws {
        var rng = SeededGenerator(state: 0x5077_0001)
        let recipient = Identity.generate()
        let alice = PrivateKey.generate()
        let topic = ProtocolIds.topic(conversationId: "6808def4bd91c908e46f977561042b0e")
        let message = SignedMessage.sign(id: "2c546b8b5273fadff1a7a700e4e40339", conversationId: "6808def4bd91c908e46f977561042b0e",
                                         sentAtMs: 1, contentType: ContentType.reaction,
                                         content: Array(#"{"reference":"2c546b8b5273fadff1a7a700e4e40339","action":"added","content":"👍"}"#.utf8),
                                         fallback: "f", signer: alice)
        let envelope = Envelope.seal(message.encode(), recipient: recipient.publicKey, clientId: recipient.clientId, topic: topic)
        var payloads = [PushPayload(clientId: recipient.clientId, topic: topic, envelope: envelope).encode()]
        if let file = try Vectors.load() { payloads += file.cases.map(\.payload) }
        let invite = try InviteCode.make(conversationId: "6808def4bd91c908e46f977561042b0e", name: "n", creatorEndpoint: "tcp:h:1",
                                         creatorClientId: recipient.clientId, expiresAtMs: nil, signer: alice)
        let contents: [(String, [UInt8])] = [
            (ContentType.reaction, message.contentBytes), (ContentType.text, Array("hi".utf8)),
            (ContentType.explodeSettings, Array(#"{"expiresAt":"2026-11-21T22:00:00.123Z"}"#.utf8)),
            (ContentType.membership, Array(#"{"name":"x","members":[]}"#.utf8)),
        ]
        var accepted = 0, rejected = 0
        func tally(_ ok: Bool) { if ok { accepted += 1 } else { rejected += 1 } }

        for iteration in 0..<2_000 {
            let payload = mutate(payloads[iteration % payloads.count], &rng)
            // JSON: whatever parses writes back to an equal value.
            if let value = try? JSONParser.parse(payload, limits: .init(maxBytes: 8192, maxDepth: 16)) {
                #expect(try JSONParser.parse(JSONWriter.bytes(value)) == value)
                tally(true)
            } else { tally(false) }
            // PushPayload: decode → encode → decode is stable.
            do {
                let decoded = try PushPayload.decode(payload)
                #expect(try PushPayload.decode(decoded.encode()) == decoded)
                tally(true)
            } catch { tally(false) }
            // Full open, with the recipient as the only identity.
            do {
                _ = try PushOpener.open(payload) { (clientId) throws(KeystoreError) in
                    guard clientId == recipient.clientId else { throw .missing }
                    return recipient
                }
                tally(true)
            } catch { tally(false) }
            // Envelope bytes directly.
            tally((try? Envelope.open(mutate(envelope, &rng), recipientKey: recipient.privateKey,
                                      clientId: recipient.clientId, topic: topic)) != nil)
            // Signed message: a parsed message re-encodes to the same message.
            if let parsed = try? SignedMessage.parse(mutate(message.encode(), &rng)) {
                #expect(try SignedMessage.parse(parsed.encode()) == parsed)
                tally((try? parsed.verify()) != nil)
            } else { tally(false) }
            // Content.
            let (type, content) = contents[iteration % contents.count]
            tally((try? MessageContent.decode(contentType: type, content: mutate(content, &rng),
                                              fallback: Bool.random(using: &rng) ? "fb" : nil)) != nil)
            // Invite codes, base64url and hex as text.
            let inviteText = String(decoding: mutate(Array(invite.code.utf8), &rng), as: UTF8.self)
            tally((try? InviteCode.parse(inviteText, nowMs: 0)) != nil)
            let text = String(decoding: mutate(Array("aGVsbG8gZnJvbSBhbGljZQ".utf8), &rng), as: UTF8.self)
            if let decoded = Base64URL.decode(text) {
                #expect(Base64URL.decode(Base64URL.encode(decoded)) == decoded)
                tally(true)
            } else { tally(false) }
            let hex = String(decoding: mutate(Array("00ff10ab".utf8), &rng), as: UTF8.self)
            if let decoded = Hex.decode(hex) { #expect(Hex.decode(Hex.encode(decoded)) == decoded); tally(true) } else { tally(false) }
            tally(ISO8601.millis(from: String(decoding: mutate(Array("2026-11-21T22:00:00.123Z".utf8), &rng), as: UTF8.self)) != nil)
        }
        // The mutations are neither all fatal nor all harmless.
        #expect(accepted > 1_000)
        #expect(rejected > 5_000)
    }

    /// A receipt's content (docs/protocol/receipts.md §3): mutated, it decodes to a receipt
    /// that re-encodes to itself, or to `malformed_message`; nothing else.
    @Test func receiptContentFailsCleanly() throws {
        var rng = SeededGenerator(state: 0x5077_0002)
        let seed = Receipt(delivered: ["2c546b8b5273fadff1a7a700e4e40339"],
                           failed: [.init(messageId: "6808def4bd91c908e46f977561042b0e", error: "body_missing")]).encode()
        var accepted = 0
        for _ in 0..<3_000 {
            do {
                let receipt = try Receipt.decode(mutate(seed, &rng))
                #expect(try Receipt.decode(receipt.encode()) == receipt)
                #expect((1...Receipt.maxEntries).contains(receipt.messageIds.count))
                accepted += 1
            } catch {
                #expect(error.code == .malformedMessage)
            }
        }
        #expect(accepted > 0 && accepted < 3_000)
    }
}
