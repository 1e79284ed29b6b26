import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// `sotto leave` (issue #17 item 4, docs/protocol/leave-remove.md) between real devices: the
/// leaver tells every member and deletes everything here; the creator drops it and sends the
/// updated membership; a member who is away is told when it is back (the leave outlives the
/// conversation, docs/adr/0034); the signature says who leaves.
@Suite("Messaging: leave", .serialized)
struct LeaveTests {
    @Test("a member leaves while the others are away: each is told when back (from the leaver's notice queue), the creator then sends a roster delta without it; nothing stays on the leaver")
    func leaveReachesAwayMembers() throws {
        let net = try Network(["alice", "bob", "carol"])
        let (alice, bob, carol) = (net["alice"], net["bob"], net["carol"])
        let name = ExplodeTests.unique("leave-name")
        let trip = try net.conversation(creator: alice, joiners: [bob, carol], name: name)
        try bob.waitUntil("bob lists 3 members") { try bob.conversation(trip)?["members"] as? Int == 3 }
        let text = ExplodeTests.unique("before-leaving")
        _ = try bob.json(["send", trip, text])
        try carol.waitUntil("carol has bob's text") { hasText(carol, trip, text) }
        try alice.waitUntil("alice has bob's text") { hasText(alice, trip, text) }
        let onBob = try bob.conversationIds(trip)
        // Both away, so that what reaches carol first is bob's leave itself, not alice's new list.
        for device in [alice, carol] {
            device.stopPushSocket()
            device.stopDaemon()
        }

        let left = try bob.json(["leave", trip])
        #expect((left["members"] as? NSNumber)?.intValue == 2)
        #expect(try bob.leftovers(of: onBob) == [])
        #expect(try bob.outlivingNotices() == [2, 2])
        for needle in [text, name, trip] {
            #expect(try !bob.groupFilesContain(Array(needle.utf8)), "bob's files still hold \(needle)")
        }

        try carol.startDaemon()
        try carol.startPushSocket()
        try carol.waitUntil("carol gets bob's leave from his notice queue", timeoutMs: 90_000) {
            try carol.query("SELECT count(*) FROM message WHERE conversationId = ? AND contentType = ?",
                            [.text(trip), .text(ContentType.leave)])[0].int64(0) == 1
        }
        #expect(try carol.conversation(trip)?["members"] as? Int == 2)
        #expect(try carol.query("SELECT count(*) FROM member WHERE conversationId = ? AND inboxId = ?",
                                [.text(trip), .text(onBob.inboxId)])[0].int64(0) == 0)
        let deltasBefore = try carol.query("SELECT count(*) FROM message WHERE conversationId = ? AND contentType = ?",
                                           [.text(trip), .text(ContentType.rosterDelta)])[0].int64(0)

        // Alice's worker stores the leave while her daemon is still down; her daemon, started
        // afterwards, owes the new list and sends it at launch.
        try alice.startPushSocket()
        try bob.waitUntil("bob's notices are gone", timeoutMs: 90_000) { try bob.outlivingNotices() == [0, 0] }
        #expect(try alice.query("SELECT count(*) FROM member WHERE conversationId = ? AND inboxId = ?",
                                [.text(trip), .text(onBob.inboxId)])[0].int64(0) == 0)
        try alice.startDaemon()
        #expect(try alice.conversation(trip)?["members"] as? Int == 2)
        // The change travels as a roster delta removing bob (docs/protocol/roster.md §6): version 3
        // after carol's and bob's joins.
        try carol.waitUntil("carol gets alice's roster delta without bob") {
            try carol.query("SELECT count(*) FROM message WHERE conversationId = ? AND contentType = ?",
                            [.text(trip), .text(ContentType.rosterDelta)])[0].int64(0) == deltasBefore + 1
        }
        #expect(try carol.query("SELECT rosterVersion FROM conversation WHERE id = ?", [.text(trip)])[0].int64(0) == 3)
        #expect(try carol.conversation(trip)?["members"] as? Int == 2)
        // The conversation goes on without bob.
        let after = ExplodeTests.unique("after-bob-left")
        _ = try alice.json(["send", trip, after])
        try carol.waitUntil("carol has alice's text") { hasText(carol, trip, after) }
    }

    @Test("killed right after the leave's commit (leave.committed): the restart deletes the conversation and the away members are still told")
    func leaveSurvivesAKill() throws {
        let net = try Network(["alice", "bob", "carol"])
        let (alice, bob, carol) = (net["alice"], net["bob"], net["carol"])
        let trip = try net.conversation(creator: alice, joiners: [bob, carol])
        try bob.waitUntil("bob lists 3 members") { try bob.conversation(trip)?["members"] as? Int == 3 }
        let onBob = try bob.conversationIds(trip)
        for device in [alice, carol] {
            device.stopPushSocket()
            device.stopDaemon()
        }
        bob.stopDaemon()
        try bob.startDaemon(environment: [CrashPoint.variable: "leave.committed"])
        _ = try bob.cli(["leave", trip])
        try bob.waitUntil("bob's daemon dies at leave.committed") { !bob.daemonIsRunning }
        #expect(bob.daemonKillSignal == SIGKILL)
        bob.stopDaemon()
        // Committed, not yet deleted: the leave's pushes are in the outbox.
        #expect(try bob.query("SELECT count(*) FROM conversation WHERE id = ?", [.text(trip)])[0].int64(0) == 1)
        #expect(try bob.query("SELECT count(*) FROM outbox WHERE state = 'pending'")[0].int64(0) == 2)
        try bob.startDaemon()
        try bob.waitUntil("the restart deletes it") { try bob.leftovers(of: onBob).isEmpty }
        // The away members' notices may be recorded just after the rows go (a loaded run saw
        // the rows gone first): waited for, never assumed.
        try bob.waitUntil("two notices for the two away members") { try bob.outlivingNotices() == [2, 2] }
        for device in [carol, alice] {
            try device.startDaemon()
            try device.startPushSocket()
        }
        try carol.waitUntil("carol gets bob's leave", timeoutMs: 90_000) {
            try carol.query("SELECT count(*) FROM member WHERE conversationId = ? AND inboxId = ?",
                            [.text(trip), .text(onBob.inboxId)])[0].int64(0) == 0
        }
        try alice.waitUntil("alice drops bob") { try alice.conversation(trip)?["members"] as? Int == 2 }
        try bob.waitUntil("bob's notices are gone", timeoutMs: 90_000) { try bob.outlivingNotices() == [0, 0] }
    }

    @Test("the creator cannot leave (exit 65, nothing changes); a leave signed by the creator, by a non-member, or by one member naming another removes nobody else")
    func hostileLeavesAreRefused() throws {
        let net = try Network(["alice", "bob", "carol"])
        let (alice, bob, carol) = (net["alice"], net["bob"], net["carol"])
        let trip = try net.conversation(creator: alice, joiners: [bob, carol])
        try bob.waitUntil("bob lists 3 members") { try bob.conversation(trip)?["members"] as? Int == 3 }

        let refused = try alice.cli(["leave", trip])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("creator cannot leave it; explode it instead"), "\(refused.stderr)")
        #expect(try alice.conversation(trip)?["members"] as? Int == 3)
        #expect(try alice.query("SELECT count(*) FROM message WHERE contentType = ?", [.text(ContentType.leave)])[0].int64(0) == 0)

        let target = try bob.conversationIds(trip)
        let bobMember = try alice.query("SELECT publicKey FROM member WHERE conversationId = ? AND inboxId = ?",
                                        [.text(trip), .text(target.inboxId)])[0].string(0)
        let topic = DBConversation.topic(for: trip)
        func leavePush(signer: PrivateKey, content: String) -> [UInt8] {
            let signed = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: trip, sentAtMs: WallClock.nowMs(),
                                            contentType: ContentType.leave, content: Array(content.utf8),
                                            fallback: "left the conversation", signer: signer)
            return PushPayload(clientId: target.clientId, topic: topic,
                               envelope: Envelope.seal(signed.encode(), recipient: try! PublicKey(hex: bobMember),
                                                       clientId: target.clientId, topic: topic)).encode()
        }
        func key(_ device: Device) throws -> PrivateKey {
            let inbox = try device.conversationIds(trip).inboxId
            return try Keystore(directory: device.group.keystorePath, environment: [:]).identity(inboxId: inbox).privateKey
        }
        func bobsMembers() throws -> Int64 {
            try bob.query("SELECT count(*) FROM member WHERE conversationId = ?", [.text(trip)])[0].int64(0)
        }

        // The creator's signature: the creator never leaves.
        let byCreator = try PushClient.send(leavePush(signer: try key(alice), content: "{}"), to: bob.runtime.pushSocketPath)
        #expect(byCreator.contains("unknown_sender"), "\(byCreator)")
        // Someone who is not a member.
        let stranger = try PushClient.send(leavePush(signer: Identity.generate().privateKey, content: "{}"),
                                           to: bob.runtime.pushSocketPath)
        #expect(stranger.contains("unknown_sender"), "\(stranger)")
        // Not a JSON object.
        let garbage = try PushClient.send(leavePush(signer: try key(carol), content: "[1]"), to: bob.runtime.pushSocketPath)
        #expect(garbage.contains("malformed_message"), "\(garbage)")
        #expect(try bobsMembers() == 3)
        #expect(try bob.query("SELECT count(*) FROM message WHERE contentType = ?", [.text(ContentType.leave)])[0].int64(0) == 0)

        // Carol signs a leave that names bob: the signature says who leaves, so carol goes, bob stays.
        let carolInbox = try carol.conversationIds(trip).inboxId
        let naming = try PushClient.send(leavePush(signer: try key(carol), content: #"{"inboxId":"\#(target.inboxId)"}"#),
                                         to: bob.runtime.pushSocketPath)
        #expect(naming.contains("\"ok\":true"), "\(naming)")
        #expect(try bobsMembers() == 2)
        #expect(try bob.query("SELECT count(*) FROM member WHERE conversationId = ? AND inboxId = ?",
                              [.text(trip), .text(target.inboxId)])[0].int64(0) == 1)
        #expect(try bob.query("SELECT count(*) FROM member WHERE conversationId = ? AND inboxId = ?",
                              [.text(trip), .text(carolInbox)])[0].int64(0) == 0)
    }

    @Test("garbage params and unknown conversations are refused with a clear error and change nothing")
    func garbageParamsRefused() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])
        let client = try ControlSocketClient(path: bob.runtime.controlSocketPath)
        for params: [String: Any] in [[:], ["conversation": ""], ["conversation": 7], ["conversation": ["x"]]] {
            let response = try client.call("leave", params)
            let error = try require(response["error"] as? [String: Any], "error")
            #expect((error["code"] as? NSNumber)?.intValue == -32602, "\(params) → \(response)")
            #expect((error["message"] as? String)?.contains("'conversation' must be a non-empty string") == true, "\(response)")
        }
        let unknown = try bob.cli(["leave", "ffffffffffff"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("no conversation matches 'ffffffffffff'"), "\(unknown.stderr)")
        #expect(try bob.conversation(trip)?["members"] as? Int == 2)
        #expect(try bob.query("SELECT count(*) FROM message WHERE contentType = ?", [.text(ContentType.leave)])[0].int64(0) == 0)
        #expect(try alice.conversation(trip)?["members"] as? Int == 2)
    }
}
