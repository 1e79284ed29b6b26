import Foundation
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Invites that must not let anyone in: tampered or expired codes at the joiner, and join
/// requests with a wrong secret, an unknown invite or an expired invite at the creator.
@Suite("Messaging: invite and join refusals", .serialized)
struct InviteRejectionTests {
    /// A join request as an attacker (or a buggy client) could send it: a fresh identity,
    /// any invite id and secret, sealed to the creator from the real code.
    static func forgedJoinRequest(from code: String, inviteId: String? = nil, secret: String? = nil,
                                  nowMs: Int64 = 0, endpoint: String = "unix:/tmp/nowhere.sock")
        throws -> (payload: [UInt8], messageId: String) {
        let invite = try InviteCode.parse(code, nowMs: nowMs)
        let joiner = Identity.generate()
        let content = JSONWriter.bytes([
            "inviteId": .string(inviteId ?? invite.inviteId), "secret": .string(secret ?? invite.secret),
            "profileName": "mallory", "endpoint": .string(endpoint), "clientId": .string(joiner.clientId),
        ])
        let signed = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: invite.conversationId,
                                        sentAtMs: WallClock.nowMs(), contentType: ContentType.joinRequest,
                                        content: content, fallback: nil, signer: joiner.privateKey)
        let envelope = Envelope.seal(signed.encode(), recipient: try PublicKey(hex: invite.creatorPublicKey),
                                     clientId: invite.creatorClientId, topic: invite.topic)
        let payload = PushPayload(clientId: invite.creatorClientId, topic: invite.topic, envelope: envelope).encode()
        return (payload, signed.id)
    }

    /// Sends the forged request to the creator's real push socket and waits for the daemon's decision.
    static func decision(on creator: Device, _ forged: (payload: [UInt8], messageId: String)) throws -> String {
        let ack = try PushClient.send(forged.payload, to: creator.runtime.pushSocketPath)
        guard ack.contains("\"ok\":true") else { throw Device.Failure(message: "push not stored: \(ack)") }
        var state = "pending"
        try creator.waitUntil("the creator decided") {
            state = try creator.query("SELECT state FROM join_request WHERE messageId = ?", [.text(forged.messageId)])
                .first?.string(0) ?? "missing"
            return state != "pending"
        }
        return state
    }

    @Test("a wrong secret, an unknown invite and an expired invite are rejected; nobody is added")
    func creatorRejects() throws {
        let net = try Network(["alice"])
        let alice = net["alice"]
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
        let code = try require(try alice.json(["invite", trip])["code"] as? String)

        #expect(try Self.decision(on: alice, try Self.forgedJoinRequest(from: code, secret: String(repeating: "ab", count: 32))) == "rejected")
        #expect(try Self.decision(on: alice, try Self.forgedJoinRequest(from: code, inviteId: String(repeating: "cd", count: 16))) == "rejected")

        let short = try alice.json(["invite", trip, "--expires", "1ms"])
        let shortCode = try require(short["code"] as? String)
        let expiresAt = try require((short["expiresAtMs"] as? NSNumber)?.int64Value)
        try alice.waitUntil("the invite's expiry passed") { WallClock.nowMs() > expiresAt }
        #expect(try Self.decision(on: alice, try Self.forgedJoinRequest(from: shortCode, nowMs: expiresAt - 1)) == "rejected")

        #expect(try alice.conversation(trip)?["members"] as? Int == 1)
        #expect(try alice.query("SELECT count(*) FROM member WHERE conversationId = ?", [.text(trip)])[0].int64(0) == 1)
        #expect(try alice.query("SELECT count(*) FROM message WHERE contentType = ?", [.text(ContentType.membership)])[0].int64(0) == 0)

        // The right secret on the same unexpired invite is still accepted afterwards.
        #expect(try Self.decision(on: alice, try Self.forgedJoinRequest(from: code)) == "accepted")
        #expect(try alice.conversation(trip)?["members"] as? Int == 2)
    }

    @Test("a tampered or expired code is refused by the joiner (exit 65) and changes nothing")
    func joinerRefuses() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
        let code = try require(try alice.json(["invite", trip])["code"] as? String)

        // Change one character of the secret inside the signed JSON.
        var json = try require(Base64URL.decode(String(code.dropFirst(InviteCode.prefix.count))))
        let invite = try InviteCode.parse(code)
        let secretRange = try require(String(decoding: json, as: UTF8.self).range(of: invite.secret))
        let offset = String(decoding: json, as: UTF8.self).utf8.distance(from: String(decoding: json, as: UTF8.self).startIndex, to: secretRange.lowerBound)
        json[offset] = json[offset] == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")
        let tampered = InviteCode.prefix + Base64URL.encode(json)
        let refused = try bob.cli(["join", tampered])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("signature"))

        let short = try alice.json(["invite", trip, "--expires", "1ms"])
        let expiresAt = try require((short["expiresAtMs"] as? NSNumber)?.int64Value)
        try bob.waitUntil("the invite's expiry passed") { WallClock.nowMs() > expiresAt }
        let expired = try bob.cli(["join", try require(short["code"] as? String)])
        #expect(expired.status == 65)
        #expect(expired.stderr.contains("expired"))

        #expect(try bob.conversations().isEmpty)
        #expect(try bob.query("SELECT count(*) FROM inbox")[0].int64(0) == 0)
        #expect(try alice.query("SELECT count(*) FROM join_request")[0].int64(0) == 0)
    }
}
