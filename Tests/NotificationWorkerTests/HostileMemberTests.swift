import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// A member (or a stranger) who sends what it may not, with every field at its edge,
/// through the real worker on a real socket (systemd-socket-activate --accept). Each push
/// must get its PROTOCOL §2 error and leave every table byte-identical, and the
/// conversation must still be there and not exploding (docs/protocol-rules.md).
@Suite("Hostile members")
struct HostileMemberTests {
    /// One thing a hostile sender tries, and the ack error it must get.
    struct Attempt: Sendable, CustomStringConvertible {
        let description: String
        let code: PushErrorCode
        let payload: @Sendable (WorkerFixture) throws -> [UInt8]
    }

    static let stranger = PrivateKey.generate()
    static let past = WallClock.nowMs() - 60_000

    static let attempts: [Attempt] = [
        // Who may send what.
        Attempt(description: "explode_settings (now) from a member who is not the creator", code: .unknownSender) { f in
            try f.seal(contentType: ContentType.explodeSettings, content: explode(at: past)).payload
        },
        Attempt(description: "explode_settings (in an hour) from a member who is not the creator", code: .unknownSender) { f in
            try f.seal(contentType: ContentType.explodeSettings, content: explode(at: f.now + 3_600_000)).payload
        },
        Attempt(description: "explode_settings from a stranger", code: .unknownSender) { f in
            try f.seal(contentType: ContentType.explodeSettings, content: explode(at: past), signer: stranger).payload
        },
        Attempt(description: "membership from a member who is not the creator", code: .unknownSender) { f in
            try f.seal(contentType: ContentType.membership,
                       content: membership(name: "Mine now", [(f.senderKey, "Sam"), (stranger, "Eve")])).payload
        },
        Attempt(description: "membership from the creator that drops the creator", code: .malformedMessage) { f in
            try f.seal(contentType: ContentType.membership, content: membership(name: "Trip", [(f.senderKey, "Sam")]),
                       signer: f.creatorKey).payload
        },
        Attempt(description: "membership whose inboxId is not its key's", code: .malformedMessage) { f in
            let creator = try #require(f.creatorKey)
            var members = memberObjects([(creator, "Cleo"), (stranger, "Eve")])
            members[1].set("inboxId", .string(f.senderKey.publicKey.inboxId))
            return try f.seal(contentType: ContentType.membership,
                              content: JSONWriter.bytes(["name": "Trip", "members": .array(members.map { .object($0) })]),
                              signer: creator).payload
        },
        Attempt(description: "membership listing a member twice", code: .malformedMessage) { f in
            let creator = try #require(f.creatorKey)
            return try f.seal(contentType: ContentType.membership,
                              content: membership(name: "Trip", [(creator, "Cleo"), (stranger, "Eve"), (stranger, "Eve")]),
                              signer: creator).payload
        },
        Attempt(description: "membership with a control character in a profile name", code: .malformedMessage) { f in
            let creator = try #require(f.creatorKey)
            return try f.seal(contentType: ContentType.membership,
                              content: membership(name: "Trip", [(creator, "Cleo"), (stranger, "Eve\u{1b}[2J")]),
                              signer: creator).payload
        },
        Attempt(description: "join_request to a member's device (not the creator's)", code: .unknownSender) { f in
            try f.seal(contentType: ContentType.joinRequest, content: joinRequest(profileName: "Eve"), signer: stranger).payload
        },
        Attempt(description: "join_request with a 101-byte profile name", code: .malformedMessage) { f in
            try f.seal(contentType: ContentType.joinRequest,
                       content: joinRequest(profileName: String(repeating: "e", count: 101)), signer: stranger).payload
        },
        Attempt(description: "text from a stranger", code: .unknownSender) { f in
            try f.seal(contentType: ContentType.text, content: Array("hi".utf8), signer: stranger).payload
        },
        // Forged identities and places.
        Attempt(description: "text claiming a member's inbox and key, signed by a stranger", code: .badSignature) { f in
            try f.seal(plaintext: forged(f, signer: stranger) { object in
                object.set("senderInboxId", .string(f.senderKey.publicKey.inboxId))
                object.set("senderPublicKey", .string(f.senderKey.publicKey.hex))
            })
        },
        Attempt(description: "text claiming the creator's inbox with the sender's own key", code: .badSignature) { f in
            try f.seal(plaintext: forged(f, signer: f.senderKey) { object in
                object.set("senderInboxId", .string(f.creatorInboxId))
            })
        },
        Attempt(description: "text for another conversation under this conversation's topic", code: .unknownConversation) { f in
            try f.seal(contentType: ContentType.text, content: Array("hi".utf8),
                       conversationId: Hex.encode(SecureRandom.bytes(16))).payload
        },
        // Fields at their edges.
        Attempt(description: "sentAtMs 2^63-1", code: .malformedMessage) { f in
            try f.seal(contentType: ContentType.text, content: Array("late".utf8), sentAtMs: Int64.max).payload
        },
        Attempt(description: "sentAtMs one past 9999-12-31T23:59:59.999Z", code: .malformedMessage) { f in
            try f.seal(contentType: ContentType.text, content: Array("late".utf8), sentAtMs: ISO8601.maxMillis + 1).payload
        },
        Attempt(description: "sentAtMs -1", code: .malformedMessage) { f in
            try f.seal(contentType: ContentType.text, content: Array("early".utf8), sentAtMs: -1).payload
        },
        Attempt(description: "sentAtMs 2^63 (not an Int64)", code: .malformedMessage) { f in
            try f.seal(plaintext: forged(f, signer: f.senderKey) { $0.set("sentAtMs", .double(9_223_372_036_854_775_808)) })
        },
        Attempt(description: "empty text", code: .malformedMessage) { f in
            try f.seal(contentType: ContentType.text, content: []).payload
        },
        Attempt(description: "reply with empty text", code: .malformedMessage) { f in
            try f.seal(contentType: ContentType.reply,
                       content: JSONWriter.bytes(["reference": .string(Hex.encode(SecureRandom.bytes(16))), "text": ""])).payload
        },
        Attempt(description: "reaction with an empty emoji", code: .malformedMessage) { f in
            try f.seal(contentType: ContentType.reaction, content: reaction(to: Hex.encode(SecureRandom.bytes(16)), "")).payload
        },
        Attempt(description: "reaction with a 65-byte emoji", code: .malformedMessage) { f in
            try f.seal(contentType: ContentType.reaction,
                       content: reaction(to: Hex.encode(SecureRandom.bytes(16)), String(repeating: "x", count: 65))).payload
        },
        Attempt(description: "unknown content type with an empty fallback", code: .unsupportedContent) { f in
            try f.seal(contentType: "example.org/poll:1.0", content: [1], fallback: "").payload
        },
        // Roster deltas (docs/protocol/roster.md §3, §5); the fixture's roster is at version 0.
        Attempt(description: "roster delta from a member who is not the creator", code: .unknownSender) { f in
            try f.seal(contentType: ContentType.rosterDelta, content: delta(base: 0, added: [(stranger, "Eve")])).payload
        },
        Attempt(description: "roster delta from a stranger", code: .unknownSender) { f in
            try f.seal(contentType: ContentType.rosterDelta, content: delta(base: 0, added: [(stranger, "Eve")]),
                       signer: stranger).payload
        },
        Attempt(description: "roster delta that drops the creator", code: .malformedMessage) { f in
            let creator = try #require(f.creatorKey)
            return try f.seal(contentType: ContentType.rosterDelta, content: delta(base: 0, removed: [creator.publicKey.inboxId]),
                              signer: creator).payload
        },
        Attempt(description: "roster delta that removes an unknown member", code: .malformedMessage) { f in
            try f.seal(contentType: ContentType.rosterDelta, content: delta(base: 0, removed: [stranger.publicKey.inboxId]),
                       signer: f.creatorKey).payload
        },
        Attempt(description: "roster delta that adds a member already there", code: .malformedMessage) { f in
            try f.seal(contentType: ContentType.rosterDelta, content: delta(base: 0, added: [(f.senderKey, "Sam")]),
                       signer: f.creatorKey).payload
        },
        Attempt(description: "roster delta that adds a member twice", code: .malformedMessage) { f in
            try f.seal(contentType: ContentType.rosterDelta, content: delta(base: 0, added: [(stranger, "Eve"), (stranger, "Eve")]),
                       signer: f.creatorKey).payload
        },
        Attempt(description: "roster delta whose inboxId is not its key's", code: .malformedMessage) { f in
            var added = memberObjects([(stranger, "Eve")])
            added[0].set("inboxId", .string(PrivateKey.generate().publicKey.inboxId))
            let content = JSONWriter.bytes(["base": 0, "version": 1, "added": .array(added.map { .object($0) }),
                                            "removed": [], "renamed": []])
            return try f.seal(contentType: ContentType.rosterDelta, content: content, signer: f.creatorKey).payload
        },
        Attempt(description: "roster delta 257 versions ahead", code: .malformedMessage) { f in
            try f.seal(contentType: ContentType.rosterDelta, content: delta(base: 257, added: [(stranger, "Eve")]),
                       signer: f.creatorKey).payload
        },
        Attempt(description: "roster delta that is not JSON", code: .malformedMessage) { f in
            try f.seal(contentType: ContentType.rosterDelta, content: Array("{\"base\":0,".utf8), signer: f.creatorKey).payload
        },
        Attempt(description: "unknown key with an unbalanced deep value", code: .malformedMessage) { f in
            var bytes = try forgedBytes(f, signer: f.senderKey) { _ in }
            bytes.removeLast()  // the closing brace
            bytes += Array(",\"x\":\(String(repeating: "[", count: 40))]}".utf8)
            return try f.seal(plaintext: bytes)
        },
    ]

    @Test("Refused with the right error; every table byte-identical; the conversation stays", arguments: attempts)
    func refused(attempt: Attempt) throws {
        let f = try WorkerFixture(vectors: try #require(try Vectors.load()), holdsCreatorKey: true)
        let server = try PushSocketServer.start(socketPath: f.tmp.path + "/push.sock", accept: true,
                                                command: [try WorkerRun.worker()], environment: f.environment)
        defer { server.stop() }
        let before = try f.tableContents()
        let line = try PushClient.send(try attempt.payload(f), to: server.socketPath)
        let ack = try #require(PushAck.parse(Array(line.utf8)), "not an ack: \(line)")
        #expect(WorkerRun.errorCode(ack) == attempt.code.rawValue, "\(line)")
        #expect(try f.tableContents() == before)
        #expect(try f.conversationExpiresAt() == nil)
        #expect(try f.open().queryOne("SELECT count(*) FROM conversation")?.int64(0) == 1)
    }

    @Test("A roster delta adding 1,001 members, by reference from the creator: malformed_message, every table byte-identical")
    func oversizeDeltaByReference() throws {
        let f = try WorkerFixture(vectors: try #require(try Vectors.load()), holdsCreatorKey: true)
        let server = try PushSocketServer.start(socketPath: f.tmp.path + "/push.sock", accept: true,
                                                command: [try WorkerRun.worker()], environment: f.environment)
        defer { server.stop() }
        let many = (0..<1_001).map { (PrivateKey.generate(), "M\($0)") }
        let push = f.byReference(contentType: ContentType.rosterDelta, content: Self.delta(base: 0, added: many),
                                 signer: f.creatorKey)
        let before = try f.tableContents()
        let line = try PushClient.send(push.payload, body: push.body, to: server.socketPath)
        let ack = try #require(PushAck.parse(Array(line.utf8)), "not an ack: \(line)")
        #expect(WorkerRun.errorCode(ack) == PushErrorCode.malformedMessage.rawValue, "\(line)")
        #expect(try f.tableContents() == before)
    }

    // MARK: - What must still get through

    @Test("Unknown keys nested at any depth are ignored (PROTOCOL: unknown object keys are ignored)")
    func deepUnknownKeys() throws {
        let f = try WorkerFixture(vectors: try #require(try Vectors.load()), holdsCreatorKey: true)
        let server = try PushSocketServer.start(socketPath: f.tmp.path + "/push.sock", accept: true,
                                                command: [try WorkerRun.worker()], environment: f.environment)
        defer { server.stop() }
        for depth in [4, 5, 9, 300] {
            let id = Hex.encode(SecureRandom.bytes(16))
            var nested: JSONValue = ["leaf": true]
            for level in 0..<depth { nested = level % 2 == 0 ? ["k": nested] : .array([nested]) }
            let signed = SignedMessage.sign(id: id, conversationId: f.recipient.conversationId, sentAtMs: f.now,
                                            contentType: ContentType.reply,
                                            content: JSONWriter.bytes(["reference": .string(id), "text": "deep",
                                                                       "extra": depth < 10 ? nested : .null]),
                                            fallback: "deep", signer: f.senderKey)
            var object = try #require(try JSONParser.parse(signed.encode()).object)
            object.set("extension", nested)
            let line = try PushClient.send(try f.seal(plaintext: JSONWriter.bytes(.object(object))), to: server.socketPath)
            #expect(PushAck.parse(Array(line.utf8)) == .ok(messageId: id, duplicate: false), "depth \(depth): \(line)")
            #expect(try f.message(id: id)?.fallback == "deep")
        }
    }

    @Test("Timestamps at the edges of the range are stored as sent")
    func timestampEdges() throws {
        let f = try WorkerFixture(vectors: try #require(try Vectors.load()), holdsCreatorKey: true)
        for sentAtMs in [0, ISO8601.maxMillis] {
            let push = try f.seal(contentType: ContentType.text, content: Array("edge".utf8), sentAtMs: sentAtMs)
            #expect(try WorkerRun.deliver(push.payload, mode: .payloadStdin, fixture: f)
                == .ok(messageId: push.messageId, duplicate: false))
            #expect(try f.message(id: push.messageId)?.sentAtMs == sentAtMs)
        }
    }

    @Test("Strings at their edges are stored as sent")
    func stringEdges() throws {
        let f = try WorkerFixture(vectors: try #require(try Vectors.load()), holdsCreatorKey: true)
        let long = String(repeating: "é", count: 800)    // 1,600 bytes: about the most one push holds
        let emoji = String(repeating: "👍", count: 16)    // 64 bytes, the most a reaction may carry
        let pushes = [try f.seal(contentType: ContentType.text, content: Array(long.utf8)),
                      try f.seal(contentType: ContentType.reaction,
                                 content: Self.reaction(to: Hex.encode(SecureRandom.bytes(16)), emoji))]
        for push in pushes {
            #expect(try WorkerRun.deliver(push.payload, mode: .payloadStdin, fixture: f)
                == .ok(messageId: push.messageId, duplicate: false))
        }
        #expect(try f.message(id: pushes[0].messageId)?.content == Array(long.utf8))
    }

    @Test("The creator's explode_settings and membership are taken")
    func creatorIsObeyed() throws {
        let f = try WorkerFixture(vectors: try #require(try Vectors.load()), holdsCreatorKey: true)
        let creator = try #require(f.creatorKey)
        let at = f.now + 3_600_000
        let explode = try f.seal(contentType: ContentType.explodeSettings, content: Self.explode(at: at), signer: creator)
        #expect(try WorkerRun.deliver(explode.payload, mode: .acceptYes, fixture: f)
            == .ok(messageId: explode.messageId, duplicate: false))
        #expect(try f.conversationExpiresAt() == at)
        let membership = try f.seal(contentType: ContentType.membership,
                                    content: Self.membership(name: "Trip", [(creator, "Cleo"), (f.senderKey, "Sam")]),
                                    signer: creator)
        #expect(try WorkerRun.deliver(membership.payload, mode: .acceptYes, fixture: f)
            == .ok(messageId: membership.messageId, duplicate: false))
        #expect(try f.open().queryOne("SELECT count(*) FROM member")?.int64(0) == 2)
    }

    @Test("A reaction to a message of another conversation is stored in this one only")
    func reactionAcrossConversations() throws {
        let f = try WorkerFixture(vectors: try #require(try Vectors.load()), holdsCreatorKey: true)
        // A second conversation on this device, with one message.
        let otherIdentity = Identity.generate()
        f.contentKeys.remember(otherIdentity)   // its name is sealed with its own key (docs/adr/0052)
        let other = StoreFixture.randomHex(16), otherInbox = otherIdentity.inboxId, otherMessage = StoreFixture.randomHex(16)
        let conn = try f.open()
        try conn.immediateTransaction { () throws(InboxWriteError) in
            try InboxWriter.save(inboxId: otherInbox, clientId: SecureRandom.uuidV4(), now: f.now, on: conn)
            try InboxWriter.createConversation(
                NewConversation(id: other, inboxId: otherInbox, name: "Other", creatorInboxId: otherInbox, state: .active,
                                createdAt: f.now, members: []), on: conn)
        }
        try conn.run("""
            INSERT INTO message(id, conversationId, senderInboxId, sentAt, receivedAt, contentType, content)
            VALUES (?, ?, ?, ?, ?, 'xmtp.org/text:1.0', x'6869')
            """, [.text(otherMessage), .text(other), .text(otherInbox), .integer(f.now), .integer(f.now)])
        let otherRows = { () throws -> [String] in
            try conn.query("SELECT quote(id) || quote(referenceId) FROM message WHERE conversationId = ?", [.text(other)])
                .map { try $0.string(0) } + [String(try conn.queryOne("""
                    SELECT unreadCount FROM conversation_local_state WHERE conversationId = ?
                    """, [.text(other)])?.int64(0) ?? -1)]
        }
        let before = try otherRows()
        let push = try f.seal(contentType: ContentType.reaction, content: Self.reaction(to: otherMessage, "👍"))
        #expect(try WorkerRun.deliver(push.payload, mode: .acceptYes, fixture: f) == .ok(messageId: push.messageId, duplicate: false))
        #expect(try f.message(id: push.messageId)?.conversationId == f.recipient.conversationId)
        #expect(try otherRows() == before)
    }

    // MARK: - Content builders

    static func explode(at ms: Int64) -> [UInt8] {
        JSONWriter.bytes(["expiresAt": .string(ISO8601.string(fromMillis: ms))])
    }

    static func memberObjects(_ members: [(PrivateKey, String)]) -> [JSONObject] {
        members.map { key, name in
            ["inboxId": .string(key.publicKey.inboxId), "publicKey": .string(key.publicKey.hex),
             "endpoint": "unix:/tmp/m.sock", "clientId": .string(SecureRandom.uuidV4()), "profileName": .string(name)]
        }
    }

    static func membership(name: String, _ members: [(PrivateKey, String)]) -> [UInt8] {
        JSONWriter.bytes(["name": .string(name), "members": .array(memberObjects(members).map { .object($0) })])
    }

    static func delta(base: Int64, added: [(PrivateKey, String)] = [], removed: [String] = []) -> [UInt8] {
        JSONWriter.bytes(["base": .int(base), "version": .int(base + 1), "added": .array(memberObjects(added).map { .object($0) }),
                          "removed": .array(removed.map { .string($0) }), "renamed": []])
    }

    static func joinRequest(profileName: String) -> [UInt8] {
        JSONWriter.bytes(["inviteId": "00ff", "secret": "abcd", "profileName": .string(profileName),
                          "endpoint": "unix:/tmp/eve.sock", "clientId": .string(SecureRandom.uuidV4())])
    }

    static func reaction(to reference: String, _ emoji: String) -> [UInt8] {
        JSONWriter.bytes(["reference": .string(reference), "action": "added", "content": .string(emoji)])
    }

    /// A text signed by `signer`, then changed by `edit` after signing (as JSON bytes).
    static func forgedBytes(_ f: WorkerFixture, signer: PrivateKey, _ edit: (inout JSONObject) -> Void) throws -> [UInt8] {
        let signed = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: f.recipient.conversationId,
                                        sentAtMs: f.now, contentType: ContentType.text, content: Array("forged".utf8),
                                        fallback: nil, signer: signer)
        var object = try #require(try JSONParser.parse(signed.encode()).object)
        edit(&object)
        return JSONWriter.bytes(.object(object))
    }

    static func forged(_ f: WorkerFixture, signer: PrivateKey, _ edit: (inout JSONObject) -> Void) throws -> [UInt8] {
        try forgedBytes(f, signer: signer, edit)
    }
}
