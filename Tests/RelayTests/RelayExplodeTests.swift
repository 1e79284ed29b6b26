import Foundation
import RelayTransport
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Explode with a member offline, end to end (issue #12): bob's daemon and sotto-relayd are
/// stopped while the conversation's creator publishes into his mailbox; when bob comes back
/// the messages arrive in order, the conversation is deleted (rows and keystore identity), and
/// sotto-relayd deletes the consumer and purges the mailbox, so the relay holds nothing for it.
@Suite("Relay explode", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayExplodeTests {
    @Test("an explode queued on the relay while bob is offline: messages in order, then the conversation and its mailbox are gone")
    func explodeWhileOffline() throws {
        guard let rig = try OfflineMemberRig.make() else { return }
        defer { rig.tearDown() }
        try rig.startRelayd()
        rig.stopRelayd()
        rig.bob.stopDaemon()

        // Offline: three messages, the explode request, and one message sent after it.
        let texts = try (1...3).map { try rig.push(text: "before the explosion \($0)", signer: rig.alice) }
        let explode = try rig.explode(at: WallClock.nowMs(), signer: rig.alice)
        let late = try rig.push(text: "after the explosion", signer: rig.alice)
        for push in texts + [explode, late] { try rig.publish(push.payload, messageId: push.messageId, to: rig.trip.mailbox) }
        #expect(try rig.publisher().storedCount(rig.trip.mailbox) == 5)

        // Back, relayd first (the daemon still stopped): the worker stores them in order.
        try rig.startRelayd()
        try waitUntil("the explode request stored", timeout: 60) {
            try rig.storedMessageIds(in: rig.trip.conversationId).contains(explode.messageId)
        }
        #expect(try rig.storedMessageIds(in: rig.trip.conversationId).suffix(4) == (texts + [explode]).map(\.messageId))
        // The message after it reaches an exploded conversation: refused for good, not kept.
        try waitUntil("the late message terminated", timeout: 60) {
            rig.relaydOutput.contains { $0.contains("terminated message") && $0.contains("conversation_expired") }
        }
        #expect(try rig.storedMessageIds(in: rig.trip.conversationId).contains(late.messageId) == false)
        #expect(try rig.bob.query("SELECT expiresAt FROM conversation WHERE id = ?",
                                  [.text(rig.trip.conversationId)]).first?.optionalInt64(0) != nil)

        // One more while bob's push socket is down: relayd can only hold it back (retry), so it
        // is still on the relay when the identity goes; the purge must take it.
        rig.bob.stopPushSocket()
        let stranded = try rig.push(text: "stranded on the relay", signer: rig.alice)
        try rig.publish(stranded.payload, messageId: stranded.messageId, to: rig.trip.mailbox)
        try waitUntil("relayd held the stranded message back", timeout: 60) {
            rig.relaydOutput.contains { $0.contains("not stored (push socket") }
        }
        #expect(try rig.publisher().storedCount(rig.trip.mailbox) == 1)

        // Then the daemon: it deletes the conversation, and relayd retires the mailbox.
        try rig.bob.startDaemon()
        try rig.bob.waitUntil("Trip deleted on bob", timeoutMs: 60_000) { try rig.rowsLeft(of: rig.trip) == 0 }
        #expect(rig.keystoreFilesLeft(of: rig.trip).isEmpty)
        try expectMailboxRetired(rig, rig.trip)
    }

    @Test("a scheduled explode queued while bob is offline: delivered in order, the conversation deleted at its time, not before")
    func scheduledExplodeWhileOffline() throws {
        guard let rig = try OfflineMemberRig.make() else { return }
        defer { rig.tearDown() }
        try rig.startRelayd()
        rig.stopRelayd()
        rig.bob.stopDaemon()

        let texts = try (1...3).map { try rig.push(text: "scheduled \($0)", signer: rig.alice) }
        // The explosion time is what the test waits for; 20 s leaves room for a loaded machine to deliver first.
        let expiresAtMs = ISO8601.millis(from: ISO8601.string(fromMillis: WallClock.nowMs() + 20_000))!
        let explode = try rig.explode(at: expiresAtMs, signer: rig.alice)
        for push in texts + [explode] { try rig.publish(push.payload, messageId: push.messageId, to: rig.trip.mailbox) }

        // Back, the daemon first this time, then relayd: the daemon hears of the explode from the worker.
        try rig.bob.startDaemon()
        try rig.startRelayd()
        try waitUntil("the explode request stored", timeout: 60) {
            try rig.storedMessageIds(in: rig.trip.conversationId).contains(explode.messageId)
        }
        let arrivedAtMs = WallClock.nowMs()
        #expect(arrivedAtMs < expiresAtMs, "delivery took past the explosion time; the test proves less")
        #expect(try rig.storedMessageIds(in: rig.trip.conversationId).suffix(4) == (texts + [explode]).map(\.messageId))
        #expect((try rig.bob.conversation(rig.trip.conversationId)?["expiresAtMs"] as? NSNumber)?.int64Value == expiresAtMs)

        try rig.bob.waitUntil("Trip deleted on bob", timeoutMs: 90_000) { try rig.rowsLeft(of: rig.trip) == 0 }
        let deletedByMs = WallClock.nowMs()
        #expect(deletedByMs >= expiresAtMs, "deleted \(expiresAtMs - deletedByMs) ms before its explosion time")
        #expect(rig.keystoreFilesLeft(of: rig.trip).isEmpty)
        try expectMailboxRetired(rig, rig.trip)
    }

    @Test("explode requests bob must not obey, queued while offline: a non-member's, a plain member's, one moved into another mailbox; nothing changes")
    func hostileExplodeRequests() throws {
        guard let rig = try OfflineMemberRig.make() else { return }
        defer { rig.tearDown() }
        // A second conversation of bob's (he created it), whose mailbox receives a moved request.
        let otherId = try #require(try rig.bob.json(["new", "--name", "Other"])["conversationId"] as? String)
        let other = try OfflineMemberRig.inbox(of: rig.bob, conversationId: otherId)
        let member = try RemoteMember.join(conversationId: rig.trip.conversationId, databasePath: rig.bob.group.databasePath)
        try rig.startRelayd()
        try #require(rig.relayd?.waitForLine(containing: "identity added: \(other.mailbox)", timeout: 30) == true)
        rig.stopRelayd()
        rig.bob.stopDaemon()
        let before = try DatabaseDump.tables(path: rig.bob.group.databasePath)

        let now = WallClock.nowMs()
        let stranger = try rig.explode(at: now, signer: Identity.generate())
        let notCreator = try rig.explode(at: now, signer: member.identity)
        // Alice's real request to Trip, re-addressed to bob's other inbox (the envelope as it was).
        let real = try rig.explode(at: now, signer: rig.alice)
        let moved = PushPayload(clientId: other.clientId, topic: nil, envelope: real.envelope).encode()
        try rig.publish(stranger.payload, messageId: stranger.messageId, to: rig.trip.mailbox)
        try rig.publish(notCreator.payload, messageId: notCreator.messageId, to: rig.trip.mailbox)
        try rig.publish(moved, messageId: real.messageId, to: other.mailbox)

        try rig.startRelayd()
        try waitUntil("all three terminated", timeout: 60) {
            rig.relaydOutput.filter { $0.contains("terminated message") }.count >= 3
        }
        let refusals = rig.relaydOutput.filter { $0.contains("terminated message") }
        #expect(refusals.filter { $0.contains("\(rig.trip.mailbox)") && $0.contains("(unknown_sender)") }.count == 2, "\(refusals)")
        #expect(refusals.contains { $0.contains("\(other.mailbox)") && $0.contains("(decrypt_failed)") }, "\(refusals)")
        #expect(try DatabaseDump.tables(path: rig.bob.group.databasePath) == before)
        for mailbox in [rig.trip.mailbox, other.mailbox] {
            #expect(try rig.publisher().storedCount(mailbox) == 0)
        }

        // With the daemon back, a later message from alice arrives (so everything before it was
        // handled) and both conversations are still there, neither exploding.
        try rig.bob.startDaemon()
        let later = try rig.push(text: "still here", signer: rig.alice)
        try rig.publish(later.payload, messageId: later.messageId, to: rig.trip.mailbox)
        try waitUntil("the later message stored", timeout: 60) {
            try rig.storedMessageIds(in: rig.trip.conversationId).contains(later.messageId)
        }
        for id in [rig.trip.conversationId, otherId] {
            let conversation = try #require(try rig.bob.conversation(id))
            #expect(conversation["expiresAtMs"] == nil)
        }
        #expect(rig.keystoreFilesLeft(of: rig.trip).count == 2)
        #expect(try rig.publisher().consumerState(rig.trip.mailbox) != nil)
    }

    /// sotto-relayd deleted the mailbox's consumer and purged it: the relay holds nothing for it.
    private func expectMailboxRetired(_ rig: OfflineMemberRig, _ inbox: OfflineMemberRig.Inbox) throws {
        try waitUntil("relayd retired \(inbox.mailbox)", timeout: 30) {
            rig.relaydOutput.contains { $0.contains("consumer deleted and mailbox purged: \(inbox.mailbox)") }
        }
        #expect(try rig.publisher().consumerState(inbox.mailbox) == nil)
        #expect(try rig.publisher().storedCount(inbox.mailbox) == 0)
    }
}
