import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Hostile members against real daemons: a peer that really joined sends what only the
/// creator may send straight to the creator's push socket, a join request is replayed, and
/// a database written by an older worker carries a non-creator's explosion time.
@Suite("Hostile members against a real daemon", .serialized)
struct HostileMemberDaemonTests {
    /// `device`'s identity for `conversation`, read from its keystore: what a member's own
    /// hostile client would sign with.
    static func identity(of device: Device, in conversation: String) throws -> Identity {
        let inboxId = try require(try device.conversation(conversation)?["inboxId"] as? String, "inboxId")
        return try Keystore(directory: device.group.keystorePath, environment: [:]).identity(inboxId: inboxId)
    }

    /// A push signed by `sender`, sealed to `creator`'s inbox of `conversation` as a real sender
    /// would (any device's own inbox: the name says where these tests mostly aim).
    static func push(from sender: Identity, to creator: Device, in conversation: String, contentType: String,
                     content: [UInt8], fallback: String? = nil, id: String = Hex.encode(SecureRandom.bytes(16)),
                     sentAtMs: Int64 = WallClock.nowMs()) throws -> (payload: [UInt8], messageId: String) {
        let row = try require(try creator.query("""
            SELECT m.publicKey, m.clientId, c.topic FROM conversation c
            JOIN member m ON m.conversationId = c.id AND m.inboxId = c.inboxId WHERE c.id = ?
            """, [.text(conversation)]).first, "creator's member row")
        let signed = SignedMessage.sign(id: id, conversationId: conversation,
                                        sentAtMs: sentAtMs, contentType: contentType, content: content,
                                        fallback: fallback, signer: sender.privateKey)
        let clientId = try row.string(1), topic = try row.string(2)
        let envelope = Envelope.seal(signed.encode(), recipient: try PublicKey(hex: try row.string(0)),
                                     clientId: clientId, topic: topic)
        return (PushPayload(clientId: clientId, topic: topic, envelope: envelope).encode(), signed.id)
    }

    static func waitForOutbox(_ device: Device) throws {
        try device.waitUntil("\(device.name)'s outbox has nothing pending") {
            try device.query("SELECT count(*) FROM outbox WHERE state = 'pending'")[0].int64(0) == 0
        }
    }

    @Test("A member who joined cannot explode the creator's conversation by pushing explode_settings")
    func joinedPeerCannotExplode() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob])
        let mallory = try Self.identity(of: bob, in: trip)
        try Self.waitForOutbox(alice)
        let before = try DatabaseDump.tables(path: alice.group.databasePath)

        let now = ISO8601.string(fromMillis: WallClock.nowMs() - 1_000)
        let explode = try Self.push(from: mallory, to: alice, in: trip, contentType: ContentType.explodeSettings,
                                    content: JSONWriter.bytes(["expiresAt": .string(now)]),
                                    fallback: "Conversation expires at \(now)")
        let ack = try PushClient.send(explode.payload, to: alice.runtime.pushSocketPath)
        let parsed = try #require(PushAck.parse(Array(ack.utf8)), "not an ack: \(ack)")
        if case .error(let error) = parsed {
            #expect(error.code == .unknownSender, "\(ack)")
        } else {
            Issue.record("explode_settings from a member who is not the creator was taken: \(ack)")
        }
        #expect(try DatabaseDump.tables(path: alice.group.databasePath) == before)

        // Anything the daemon would have done with it is done once a later message shows.
        _ = try bob.json(["send", trip, "still here"])
        try alice.waitUntil("alice shows bob's message, or lost the conversation") {
            try hasText(alice, trip, "still here") || isGone(alice, trip)
        }
        let conversation = try #require(try alice.conversation(trip))
        #expect(conversation["expiresAtMs"] == nil)
        #expect(try alice.query("SELECT count(*) FROM message WHERE id = ?", [.text(explode.messageId)])[0].int64(0) == 0)
    }

    @Test("A replayed join request acks duplicate and writes nothing")
    func joinRequestReplay() throws {
        let net = try Network(["alice", "eve"])
        let alice = net["alice"], eve = net["eve"]
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
        let code = try require(try alice.json(["invite", trip])["code"] as? String)
        // Eve's device answers the membership (unknown_client: the forged identity is not
        // hers), so alice's outbox settles and nothing moves in the background afterwards.
        let request = try InviteRejectionTests.forgedJoinRequest(from: code, endpoint: eve.endpoint)
        #expect(try InviteRejectionTests.decision(on: alice, request) == "accepted")
        try alice.waitUntil("the membership's delivery settled") {
            try alice.query("SELECT count(*) FROM outbox WHERE state != 'pending'")[0].int64(0) == 1
        }
        let before = try DatabaseDump.tables(path: alice.group.databasePath)

        let ack = try PushClient.send(request.payload, to: alice.runtime.pushSocketPath)
        #expect(PushAck.parse(Array(ack.utf8)) == .ok(messageId: request.messageId, duplicate: true), "\(ack)")
        let after = try DatabaseDump.tables(path: alice.group.databasePath)
        for table in Set(before.keys).union(after.keys) where before[table] != after[table] {
            Issue.record("\(table) changed: \(Set(after[table] ?? []).symmetricDifference(before[table] ?? []))")
        }
        #expect(try alice.conversation(trip)?["members"] as? Int == 2)
    }

    @Test("An explosion time no creator's message backs (an older worker's) is cleared, not obeyed")
    func unbackedExpiryIsCleared() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob])
        let mallory = try Self.identity(of: bob, in: trip)
        alice.stopDaemon()

        // What a worker before the sender rules stored for a member's explode_settings.
        let past = WallClock.nowMs() - 60_000
        let conn = try SQLiteConnection.open(path: alice.group.databasePath, profile: .worker)
        try conn.immediateTransaction { () throws(StoreError) in
            try conn.run("""
                INSERT INTO message(id, conversationId, senderInboxId, sentAt, receivedAt, contentType, content)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """, [.text(Hex.encode(SecureRandom.bytes(16))), .text(trip), .text(mallory.inboxId), .integer(past),
                      .integer(past), .text(ContentType.explodeSettings),
                      .blob(JSONWriter.bytes(["expiresAt": .string(ISO8601.string(fromMillis: past))]))])
            try conn.run("UPDATE conversation SET expiresAt = ? WHERE id = ?", [.integer(past), .text(trip)])
        }

        try alice.startDaemon()
        try alice.waitUntil("alice's sweep decided") {
            try alice.query("SELECT count(*) FROM conversation WHERE id = ? AND expiresAt IS NOT NULL", [.text(trip)])[0]
                .int64(0) == 0
        }
        #expect(try alice.conversation(trip) != nil)
        #expect(alice.daemonLog.contains("explosion time not set by its creator"))
    }
}
