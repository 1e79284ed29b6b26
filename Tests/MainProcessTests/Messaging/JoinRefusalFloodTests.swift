import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import Testing
import TestSupport

/// A flood of bad join requests cannot make the creator a sender of pushes
/// (docs/protocol/join-refusal.md §6): 100 requests with a wrong secret, each from a fresh
/// identity naming one listening endpoint, sent to the creator's real push socket as fast as
/// it takes them. The real daemon rejects all 100 and answers at most the per-conversation
/// bound (10 at once, then one per 6 s); the rest are dropped unanswered and counted in its log.
/// Each refusal that arrives opens with the identity it was meant for and names its request.
@Suite("Messaging: join refusals are rate bound", .serialized)
struct JoinRefusalFloodTests {
    @Test("100 bad join requests: all rejected, at most 10 + elapsed/6 s refusals sent, each to its requester")
    func flood() throws {
        let net = try Network(["alice"])
        let alice = net["alice"]
        let sink = AckingPushSink(path: net.tmp.path + "/requesters.sock", keep: true)
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
        let code = try require(try alice.json(["invite", trip, "--expires", "1h"])["code"] as? String)
        let invite = try InviteCode.parse(code)

        let count = 100
        var requesters: [String: (identity: Identity, requestId: String)] = [:]
        var payloads: [[UInt8]] = []
        for _ in 0..<count {
            let joiner = Identity.generate()
            let content = JSONWriter.bytes([
                "inviteId": .string(invite.inviteId), "secret": .string(Hex.encode(SecureRandom.bytes(32))),
                "profileName": "mallory", "endpoint": .string("unix:" + sink.path), "clientId": .string(joiner.clientId),
            ])
            let signed = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: trip, sentAtMs: WallClock.nowMs(),
                                            contentType: ContentType.joinRequest, content: content, fallback: nil,
                                            signer: joiner.privateKey)
            let envelope = Envelope.seal(signed.encode(), recipient: try PublicKey(hex: invite.creatorPublicKey),
                                         clientId: invite.creatorClientId, topic: invite.topic)
            payloads.append(PushPayload(clientId: invite.creatorClientId, topic: invite.topic, envelope: envelope).encode())
            requesters[joiner.clientId] = (joiner, signed.id)
        }

        let started = WallClock.nowMs()
        for payload in payloads {
            let ack = try PushClient.send(payload, to: alice.runtime.pushSocketPath)
            #expect(ack.contains("\"ok\":true"), "\(ack)")
        }
        try alice.waitUntil("alice decided every request", timeoutMs: 60_000) {
            try alice.query("SELECT count(*) FROM join_request WHERE state = 'rejected'")[0].int64(0) == Int64(count)
        }
        let elapsedMs = WallClock.nowMs() - started
        try alice.waitUntil("every refusal queued is delivered", timeoutMs: 30_000) {
            try alice.query("SELECT count(*) FROM outliving_notice")[0].int64(0) == 0
        }
        let sent = sink.captured
        let bound = 10 + Int(elapsedMs / 6_000) + 1
        print("join refusal flood: \(count) bad requests decided in \(elapsedMs) ms, \(sent.count) refusals sent (bound \(bound))")
        #expect(sent.count >= 10, "the first 10 are answered")
        #expect(sent.count <= bound, "\(sent.count) refusals in \(elapsedMs) ms")
        // The last request's rejection commits before its drop is logged.
        try alice.waitUntil("every unanswered request is counted in the log") {
            alice.daemonLog.contains("over the refusal rate bound (\(count - sent.count) unanswered since start)")
        }
        #expect(try alice.conversation(trip)?["members"] as? Int == 1)

        var answered: Set<String> = []
        for payload in sent {
            let decoded = try PushPayload.decode(payload)
            let requester = try require(requesters[decoded.clientId], "a requester for \(decoded.clientId)")
            let opened = try PushOpener.open(decoded, body: nil, identityForClientId: { _ in requester.identity },
                                             topicForClientId: { _ in invite.topic })
            #expect(opened.message.senderInboxId == invite.creatorInboxId)
            #expect(opened.content == .joinRefused(JoinRefusal(joinRequestId: requester.requestId, reason: .badSecret)))
            answered.insert(requester.requestId)
        }
        #expect(answered.count == sent.count, "one refusal per answered request")
    }
}
