import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import Testing
import TestSupport

/// Only the creator can refuse a join, and only the join it was asked (docs/protocol/join-refusal.md
/// §5): the test is the creator (it holds the key its invite names), bob is a real daemon and
/// worker whose join is pending. Refusals signed by someone else, for another join, replayed,
/// or garbage are refused by bob's worker and change nothing; the creator's real one is applied.
@Suite("Messaging: forged join refusals", .serialized)
struct JoinRefusalHostileTests {
    /// A creator that exists only in the test: its invite names an endpoint nobody listens
    /// on, so bob's request waits in bob's outbox, and the test seals what it likes.
    struct Creator {
        let identity = Identity.generate()
        let conversationId = Hex.encode(SecureRandom.bytes(16))

        func invite(in directory: String) throws -> String {
            try InviteCode.make(conversationId: conversationId, name: "Cora's", creatorEndpoint: "unix:\(directory)/cora.sock",
                                creatorClientId: identity.clientId, expiresAtMs: nil, signer: identity.privateKey).code
        }
    }

    /// A `sotto/join_refused:1.0` push signed by `signer`, sealed to the pending join's identity
    /// with no topic, as Sotto sends it.
    static func refusal(_ content: [UInt8], signer: Identity, to pending: Device.PendingJoin,
                        id: String = Hex.encode(SecureRandom.bytes(16))) throws -> (payload: [UInt8], signed: SignedMessage) {
        let signed = SignedMessage.sign(id: id, conversationId: pending.conversationId, sentAtMs: WallClock.nowMs(),
                                        contentType: ContentType.joinRefused, content: content, fallback: nil,
                                        signer: signer.privateKey)
        return (sealed(signed, to: pending), signed)
    }

    static func sealed(_ signed: SignedMessage, to pending: Device.PendingJoin) -> [UInt8] {
        let envelope = Envelope.seal(signed.encode(), recipient: pending.identity.publicKey, clientId: pending.identity.clientId,
                                     topic: DBConversation.topic(for: pending.conversationId))
        return PushPayload(clientId: pending.identity.clientId, topic: nil, envelope: envelope).encode()
    }

    /// What a refusal may change on bob: his refusals, the conversation's state, the identity file.
    static func state(_ bob: Device, _ pending: Device.PendingJoin) throws -> String {
        let refusals = try bob.query("SELECT joinRequestId || ' ' || reason FROM join_refusal ORDER BY 1").map { try $0.string(0) }
        let conversation = try bob.query("SELECT state FROM conversation WHERE id = ?", [.text(pending.conversationId)])
            .first?.string(0) ?? "none"
        return "\(refusals) \(conversation) \(FileManager.default.fileExists(atPath: pending.identityFile))"
    }

    @Test("a stranger's refusal, one for another join, garbage and a replay to a later join are refused and change nothing")
    func forgedRefusals() throws {
        let tmp = try TemporaryDirectory(prefix: "sr")
        let bob = try Device.start("bob", in: tmp.path)
        defer { bob.stop() }
        let cora = Creator()
        _ = try bob.json(["join", try cora.invite(in: tmp.path), "--profile-name", "Bob"])
        let pending = try bob.pendingJoin(cora.conversationId)
        let untouched = try Self.state(bob, pending)
        #expect(untouched == "[] pendingJoin true")
        let right = JoinRefusal(joinRequestId: pending.joinRequestId, reason: .revoked).encode()

        let hostile: [(String, [UInt8], String)] = [
            ("signed by a stranger", try Self.refusal(right, signer: Identity.generate(), to: pending).payload, "unknown_sender"),
            ("signed by bob's own pending identity", try Self.refusal(right, signer: pending.identity, to: pending).payload,
             "unknown_sender"),
            ("for another join", try Self.refusal(JoinRefusal(joinRequestId: Hex.encode(SecureRandom.bytes(16)), reason: .revoked).encode(),
                                                  signer: cora.identity, to: pending).payload, "unknown_message"),
            ("not JSON", try Self.refusal([0xff, 0x00, 0x41], signer: cora.identity, to: pending).payload, "malformed_message"),
            ("a terminal escape as reason",
             try Self.refusal(Array("{\"joinRequestId\":\"\(pending.joinRequestId)\",\"reason\":\"\\u001b[31m\"}".utf8),
                              signer: cora.identity, to: pending).payload, "malformed_message"),
        ]
        for (what, payload, code) in hostile {
            let ack = try PushClient.send(payload, to: bob.runtime.pushSocketPath)
            #expect(ack.contains("\"error\":\"\(code)\""), "\(what): \(ack)")
            #expect(try Self.state(bob, pending) == untouched, "\(what) changed nothing")
        }
        #expect(try bob.refusedJoins().isEmpty)

        // The creator's own refusal of this join: applied, then the pending join is deleted.
        let real = try Self.refusal(right, signer: cora.identity, to: pending)
        let ack = try PushClient.send(real.payload, to: bob.runtime.pushSocketPath)
        #expect(ack.contains("\"ok\":true") && ack.contains("\"duplicate\":false"), "\(ack)")
        try bob.waitUntil("bob deletes the pending join", timeoutMs: 30_000) { try bob.isDeleted(pending) }
        #expect(try bob.refusedJoin(cora.conversationId)?["reason"] as? String == "revoked")
        let shown = try Self.state(bob, pending)

        // Replayed as it was: its identity is gone, so it opens nowhere.
        let replay = try PushClient.send(real.payload, to: bob.runtime.pushSocketPath)
        #expect(replay.contains("\"error\":\"unknown_client\""), "\(replay)")
        #expect(try Self.state(bob, pending) == shown)

        // Bob tries again with a new invite: a new pending identity and request. The old signed
        // refusal sealed to the new identity names the old request: refused, nothing changes.
        _ = try bob.json(["join", try cora.invite(in: tmp.path), "--profile-name", "Bob"])
        let again = try bob.pendingJoin(cora.conversationId)
        #expect(try bob.refusedJoins().isEmpty, "a new try supersedes the refusal shown")
        let before = try Self.state(bob, again)
        let resealed = try PushClient.send(Self.sealed(real.signed, to: again), to: bob.runtime.pushSocketPath)
        #expect(resealed.contains("\"error\":\"unknown_message\""), "\(resealed)")
        #expect(try Self.state(bob, again) == before)
        #expect(before.hasSuffix("pendingJoin true"))

        // The creator's refusal of the new join is applied too; `sotto ls` shows the latest one.
        let second = try Self.refusal(JoinRefusal(joinRequestId: again.joinRequestId, reason: .full).encode(),
                                      signer: cora.identity, to: again)
        let first = try PushClient.send(second.payload, to: bob.runtime.pushSocketPath)
        #expect(first.contains("\"ok\":true"), "\(first)")
        try bob.waitUntil("the second join is deleted", timeoutMs: 30_000) { try bob.isDeleted(again) }
        #expect(try bob.refusedJoin(cora.conversationId)?["reason"] as? String == "full")
        #expect(try bob.query("SELECT count(*) FROM join_refusal")[0].int64(0) == 1)
    }

    @Test("the creator's refusal of a join it already accepted is refused: the conversation stays active")
    func refusalAfterAcceptance() throws {
        let tmp = try TemporaryDirectory(prefix: "sr")
        let bob = try Device.start("bob", in: tmp.path)
        defer { bob.stop() }
        let cora = Creator()
        _ = try bob.json(["join", try cora.invite(in: tmp.path), "--profile-name", "Bob"])
        let pending = try bob.pendingJoin(cora.conversationId)
        // Cora accepts: the full roster at version 1 makes bob's conversation active.
        func member(_ identity: Identity, _ name: String) -> JSONValue {
            ["inboxId": .string(identity.inboxId), "publicKey": .string(identity.publicKey.hex),
             "endpoint": .string("unix:\(tmp.path)/\(name).sock"), "clientId": .string(identity.clientId),
             "profileName": .string(name)]
        }
        let roster = JSONWriter.bytes(["name": "Cora's", "members": .array([member(cora.identity, "Cora"), member(pending.identity, "Bob")]),
                                       "version": 1])
        let accepted = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: cora.conversationId,
                                          sentAtMs: WallClock.nowMs(), contentType: ContentType.membership, content: roster,
                                          fallback: nil, signer: cora.identity.privateKey)
        let ack = try PushClient.send(Self.sealed(accepted, to: pending), to: bob.runtime.pushSocketPath)
        #expect(ack.contains("\"ok\":true"), "\(ack)")
        try bob.waitUntil("bob's conversation is active") { try bob.conversation(cora.conversationId)?["state"] as? String == "active" }

        let late = try Self.refusal(JoinRefusal(joinRequestId: pending.joinRequestId, reason: .revoked).encode(),
                                    signer: cora.identity, to: pending)
        let refused = try PushClient.send(late.payload, to: bob.runtime.pushSocketPath)
        #expect(refused.contains("\"error\":\"unknown_message\""), "\(refused)")
        #expect(try bob.query("SELECT count(*) FROM join_refusal")[0].int64(0) == 0)
        #expect(try bob.conversation(cora.conversationId)?["state"] as? String == "active")
        #expect(FileManager.default.fileExists(atPath: pending.identityFile))
    }
}
