import SottoCrypto
import SottoWire
import Testing

@Suite("Protocol round trips")
struct ProtocolTests {
    let topic = ProtocolIds.topic(conversationId: "6808def4bd91c908e46f977561042b0e")

    @Test func envelopeSealOpenAndBindings() throws {
        let bob = Identity.generate()
        let plain = Array("{\"x\":1}".utf8)
        let sealed = Envelope.seal(plain, recipient: bob.publicKey, clientId: bob.clientId, topic: topic)
        #expect(sealed.count == Envelope.minimumByteCount + plain.count)
        #expect(try Envelope.open(sealed, recipientKey: bob.privateKey, clientId: bob.clientId, topic: topic) == plain)
        func code(_ body: () throws -> [UInt8]) -> PushErrorCode? {
            do { _ = try body(); return nil } catch { return (error as? PushError)?.code }
        }
        #expect(code { try Envelope.open(sealed, recipientKey: PrivateKey.generate(), clientId: bob.clientId, topic: topic) } == .decryptFailed)
        #expect(code { try Envelope.open(sealed, recipientKey: bob.privateKey, clientId: SecureRandom.uuidV4(), topic: topic) } == .decryptFailed)
        #expect(code { try Envelope.open(sealed, recipientKey: bob.privateKey, clientId: bob.clientId, topic: topic + "0") } == .decryptFailed)
        #expect(code { try Envelope.open([0x02] + sealed.dropFirst(), recipientKey: bob.privateKey, clientId: bob.clientId, topic: topic) } == .unsupportedVersion)
        #expect(code { try Envelope.open(Array(sealed.prefix(40)), recipientKey: bob.privateKey, clientId: bob.clientId, topic: topic) } == .decryptFailed)
        #expect(code { try Envelope.open([], recipientKey: bob.privateKey, clientId: bob.clientId, topic: topic) } == .malformedPayload)
        var badPoint = sealed
        badPoint[1] = 0x05
        #expect(code { try Envelope.open(badPoint, recipientKey: bob.privateKey, clientId: bob.clientId, topic: topic) } == .decryptFailed)
    }

    @Test func signedMessageSignParseVerify() throws {
        let alice = PrivateKey.generate()
        let message = SignedMessage.sign(id: "2c546b8b5273fadff1a7a700e4e40339", conversationId: "6808def4bd91c908e46f977561042b0e",
                                         sentAtMs: 1_763_760_000_000, contentType: ContentType.text,
                                         content: Array("hello".utf8), fallback: "hi", signer: alice)
        let parsed = try SignedMessage.parse(message.encode())
        #expect(parsed == message)
        try parsed.verify()
        let other = SignedMessage.sign(id: message.id, conversationId: message.conversationId, sentAtMs: message.sentAtMs + 1,
                                       contentType: message.contentType, content: message.contentBytes, fallback: nil, signer: alice)
        // Splice another message's signature: must fail.
        var object = try #require(try JSONParser.parse(message.encode()).object)
        object.set("signature", .string(other.signature))
        #expect(throws: PushError.self) { try SignedMessage.parse(JSONWriter.bytes(.object(object))).verify() }
        object.set("signature", .string(message.signature))
        object.set("sentAtMs", .string("1"))
        #expect { try SignedMessage.parse(JSONWriter.bytes(.object(object))) } throws: { ($0 as? PushError)?.code == .malformedMessage }
    }

    @Test func contentDecodingAndDisplay() throws {
        func decode(_ type: String, _ json: String, fallback: String? = nil) throws(PushError) -> MessageContent {
            try MessageContent.decode(contentType: type, content: Array(json.utf8), fallback: fallback)
        }
        let ref = "2c546b8b5273fadff1a7a700e4e40339"
        #expect(try decode(ContentType.text, "hé").displayText == "hé")
        #expect(try decode(ContentType.reply, #"{"reference":"\#(ref)","text":"yes"}"#) == .reply(reference: ref, text: "yes"))
        #expect(try decode(ContentType.reaction, #"{"reference":"\#(ref)","action":"added","content":"👍"}"#).displayText == "reacted 👍")
        #expect(try decode(ContentType.explodeSettings, #"{"expiresAt":"2026-11-21T22:00:00Z"}"#) == .explodeSettings(ExplodeSchedule(sequence: 0, expiresAtMs: 1_795_298_400_000)))
        #expect(try decode("x/y:1", "?", fallback: "A poll") == .unknown(contentType: "x/y:1", fallback: "A poll"))
        #expect { try decode("x/y:1", "?") } throws: { ($0 as? PushError)?.code == .unsupportedContent }
        #expect { try decode(ContentType.reply, #"{"reference":"nothex","text":"x"}"#) } throws: { ($0 as? PushError)?.code == .malformedMessage }
        #expect { try decode(ContentType.reaction, #"{"reference":"\#(ref)","action":"liked","content":"x"}"#) } throws: { ($0 as? PushError)?.code == .malformedMessage }
        #expect { try decode(ContentType.explodeSettings, #"{"expiresAt":"2026-02-30T00:00:00Z"}"#) } throws: { ($0 as? PushError)?.code == .malformedMessage }
        #expect { try MessageContent.decode(contentType: ContentType.text, content: [0xff], fallback: nil) } throws: { ($0 as? PushError)?.code == .malformedMessage }
        let join = try decode(ContentType.joinRequest, #"{"inviteId":"00ff","secret":"abcd","profileName":"Bo","endpoint":"unix:/run/s.sock","clientId":"a28b86c6-c3b9-444b-829e-dac9b60cca19"}"#)
        #expect(join.displayText == "Bo asked to join")
        let pub = PrivateKey.generate().publicKey
        let membership = try decode(ContentType.membership, #"{"name":"F","members":[{"inboxId":"\#(pub.inboxId)","publicKey":"\#(pub.hex)","endpoint":"tcp:example.org:443","clientId":"a28b86c6-c3b9-444b-829e-dac9b60cca19","profileName":"Al"}]}"#)
        guard case .membership(let name, let members, nil) = membership else { Issue.record("not membership"); return }
        #expect(name == "F" && members.count == 1 && members[0].inboxId == pub.inboxId)
    }

    @Test func iso8601() {
        #expect(ISO8601.millis(from: "1970-01-01T00:00:00Z") == 0)
        #expect(ISO8601.millis(from: "2000-02-29T12:34:56.789Z") == 951_827_696_789)
        #expect(ISO8601.millis(from: "2000-02-29T12:34:56.7Z") == 951_827_696_700)
        #expect(ISO8601.millis(from: "1900-02-29T00:00:00Z") == nil)
        #expect(ISO8601.millis(from: "2026-11-21T22:00:00") == nil)
        #expect(ISO8601.millis(from: "2026-11-21T24:00:00Z") == nil)
        #expect(ISO8601.millis(from: "2026-11-21T22:00:00.Z") == nil)
        #expect(ISO8601.millis(from: "2026-11-21 22:00:00Z") == nil)
        #expect(ISO8601.string(fromMillis: 951_827_696_789) == "2000-02-29T12:34:56.789Z")
        #expect(ISO8601.string(fromMillis: 1_795_298_400_000) == "2026-11-21T22:00:00Z")
        for ms in stride(from: Int64(-10_000_000_000_000), to: 100_000_000_000_000, by: 7_777_777_777_777) {
            #expect(ISO8601.millis(from: ISO8601.string(fromMillis: ms)) == ms)
        }
    }

    @Test func payloadAndAckShapes() throws {
        let payload = PushPayload(clientId: "a28b86c6-c3b9-444b-829e-dac9b60cca19", topic: topic, envelope: [1, 2, 3])
        #expect(try PushPayload.decode(payload.encode()) == payload)
        #expect(String(decoding: PushAck.ok(messageId: "00ff", duplicate: false).encodeLine(), as: UTF8.self)
                == "{\"ok\":true,\"messageId\":\"00ff\",\"duplicate\":false}\n")
        #expect(String(decoding: PushAck.error(PushError(.decryptFailed, "human readable")).encodeLine(), as: UTF8.self)
                == "{\"ok\":false,\"error\":\"decrypt_failed\",\"retry\":false,\"detail\":\"human readable\"}\n")
        #expect(PushAck.parse(PushAck.error(PushError(.busy, "x")).encodeLine()) == .error(PushError(.busy, "x")))
        #expect(PushErrorCode.allCases.filter(\.retry) == [.timeout, .busy, .internal])
        // PROTOCOL §2's 14 codes, docs/protocol/bodies.md's 2 and docs/protocol/receipts.md's 1.
        #expect(PushErrorCode.allCases.count == 17)
        #expect(PushErrorCode.unknownMessage.rawValue == "unknown_message" && !PushErrorCode.unknownMessage.retry)
        #expect(PushErrorCode.bodyMissing.rawValue == "body_missing" && PushErrorCode.bodyMismatch.rawValue == "body_mismatch")
        #expect { try PushPayload.decode([UInt8](repeating: 0x20, count: 4097)) } throws: { ($0 as? PushError)?.code == .payloadTooLarge }
        let upper = #"{"version":1,"clientId":"A28B86C6-C3B9-444B-829E-DAC9B60CCA19","notificationData":{"topic":"\#(topic)","envelope":"AQ"}}"#
        #expect { try PushPayload.decode(Array(upper.utf8)) } throws: { ($0 as? PushError)?.code == .malformedPayload }
        let padded = #"{"version":1,"clientId":"a28b86c6-c3b9-444b-829e-dac9b60cca19","notificationData":{"topic":"\#(topic)","envelope":"AQI="}}"#
        #expect(try PushPayload.decode(Array(padded.utf8)).envelope == [1, 2])
    }

    @Test func inviteMakeParseTamperExpire() throws {
        let creator = Identity.generate()
        let invite = try InviteCode.make(conversationId: "6808def4bd91c908e46f977561042b0e", name: "Friends",
                                         creatorEndpoint: "unix:/run/user/0/sotto/push.sock", creatorClientId: creator.clientId,
                                         expiresAtMs: 2_000, signer: creator.privateKey)
        #expect(invite.code.hasPrefix("sotto1:"))
        let parsed = try InviteCode.parse(invite.code, nowMs: 1_000)
        #expect(parsed == invite)
        #expect(parsed.creatorInboxId == creator.inboxId)
        #expect(throws: InviteError.expired) { try InviteCode.parse(invite.code, nowMs: 2_000) }
        // Tamper a signed field and re-encode: the signature no longer matches.
        let json = try JSONParser.parse(Base64URL.decode(String(invite.code.dropFirst(7)))!)
        var object = try #require(json.object)
        // The first two characters always change ("00" when they are not "00", else "ff").
        let tamperedPrefix = invite.secret.hasPrefix("00") ? "ff" : "00"
        object.set("secret", .string(tamperedPrefix + invite.secret.dropFirst(2)))
        #expect(throws: InviteError.badSignature) { try InviteCode.parse("sotto1:" + Base64URL.encode(JSONWriter.bytes(.object(object))), nowMs: 1_000) }
        // A different key claiming the creator's inbox.
        object = try #require(json.object)
        object.set("creatorPublicKey", .string(PrivateKey.generate().publicKey.hex))
        #expect(throws: InviteError.badSignature) { try InviteCode.parse("sotto1:" + Base64URL.encode(JSONWriter.bytes(.object(object))), nowMs: 1_000) }
        #expect(throws: InviteError.notAnInvite) { try InviteCode.parse("sotto2:abc") }
        #expect(throws: InviteError.tooLarge) { try InviteCode.parse("sotto1:" + String(repeating: "A", count: 5000)) }
    }
}
