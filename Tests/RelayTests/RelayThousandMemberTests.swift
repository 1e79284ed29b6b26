import Foundation
import RelayTransport
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Issue #17's 1,000-member conversation behind a real relay: one nats-server, three real
/// daemons (creator, bob, carol) each with its worker and its own `sotto-relayd`
/// (`RelayPeers`), and 997 `LightMembers` whose endpoint is the relay: their join requests are
/// published into the creator's mailbox, and what the daemons send them is read from their
/// own mailboxes (`LightMailboxes`: padded frames, bodies from `SOTTO_BODIES`) and opened with
/// the real crypto. The direct-socket twin is MainProcessTests' `ThousandMemberTests`.
@Suite("Relay: a conversation of 1,000 members", .serialized,
       .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayThousandMemberTests {
    static let lightCount = 997

    @Test("1,000 members through a relay: one roster and version everywhere; a 64 KiB text reaches all 999 others once, its body stored once; a removed member's mailbox gets nothing after; every mailbox ends empty")
    func thousandMembersThroughRelay() async throws {
        // Minutes of blocking steps: on a thread of their own, not the test pool's (async tests starve).
        try await onOwnThread { try self.steps() }
    }

    private func steps() throws {
        var clock = PhaseClock()
        guard let peers = try RelayPeers.make(["creator", "bob", "carol"]) else { return }
        clock.lap("nats-server, 3 daemons and their relayd started")
        defer {
            peers.tearDown()
            clock.lap("torn down")
        }
        try peers.diagnosed { try self.steps(peers, clock: &clock) }
    }

    private func steps(_ peers: RelayPeers, clock: inout PhaseClock) throws {
        let creator = peers["creator"], bob = peers["bob"], carol = peers["carol"]
        let thousand = try ThousandMemberConversation.make(peers, creator: "creator", joiners: ["bob", "carol"],
                                                           lightCount: Self.lightCount, clock: &clock)
        let (trip, invite, light, mailboxes) = (thousand.trip, thousand.invite, thousand.light, thousand.mailboxes)
        defer { mailboxes.close() }
        let roster = { (device: Device) throws -> Set<String> in try ThousandMemberConversation.roster(device, trip) }

        // A 64 KiB text from bob reaches every other member once, its body on the relay once.
        let bodiesBefore = try peers.relay().bodyStreamUsage().messages
        let long = "64 KiB from bob " + String(repeating: "x", count: 65_536 - 16)
        #expect(long.utf8.count == 65_536)
        let longId = try peers.send("bob", trip, long)
        try bob.waitUntil("bob's 64 KiB text relayed to all 999", timeoutMs: 240_000) {
            try bob.query("SELECT count(*) FROM outbox WHERE messageId = ? AND state IN ('relayed', 'sent', 'delivered')",
                          [.text(longId)])[0].int64(0) == 999
        }
        clock.lap("bob's 64 KiB text published to 999 mailboxes")
        var longSweeps: [LightMailboxes.Sweep] = []
        try creator.waitUntil("every light member has the 64 KiB text", timeoutMs: 120_000) {
            longSweeps.append(try mailboxes.sweep())
            return light.all().values.allSatisfy { $0.texts.values.contains(long) }
        }
        #expect(longSweeps.map(\.messages).reduce(0, +) == Self.lightCount, "one push per light member: \(longSweeps)")
        #expect(longSweeps.map(\.bodiesFetched).reduce(0, +) == 1, "every push names the one body")
        for name in ["creator", "carol"] {
            try peers[name].waitUntil("\(name) stored the 64 KiB text", timeoutMs: 60_000) {
                try peers.storedTexts(name, trip).contains(long)
            }
            #expect(try peers.storedTexts(name, trip).filter { $0 == long }.count == 1, "\(name)")
        }
        let members = light.all()
        #expect(members.values.allSatisfy { $0.texts.values.filter { $0 == long }.count == 1 })
        #expect(members.values.allSatisfy { $0.duplicates == 0 })
        #expect(try peers.relay().bodyStreamUsage().messages == bodiesBefore + 1, "the 64 KiB body is on the relay once")
        clock.lap("the 64 KiB text reached all 999 (\(light.load))")

        // The creator removes a light member; once bob and carol know, nothing carol sends
        // reaches its mailbox or opens with its key.
        let victim = light.identities[0]
        let victimBox = try Mailbox(clientId: victim.clientId)
        _ = try creator.json(["remove", trip, victim.inboxId])
        for device in [bob, carol] {
            try device.waitUntil("\(device.name) dropped the removed member", timeoutMs: 120_000) {
                try !roster(device).contains(victim.inboxId)
            }
        }
        try creator.waitUntil("every light member dropped the removed member", timeoutMs: 120_000) {
            try mailboxes.sweep()
            return light.all().values.allSatisfy { !$0.roster.contains(victim.inboxId) }
        }
        let victimReceived = mailboxes.received[victim.inboxId] ?? 0
        clock.lap("the removal reached every device")

        let after = "sent after the removal"
        let afterId = try peers.send("carol", trip, after)
        try carol.waitUntil("carol's text relayed to the 998 others", timeoutMs: 120_000) {
            try carol.query("SELECT count(*) FROM outbox WHERE messageId = ? AND state IN ('relayed', 'sent', 'delivered')",
                            [.text(afterId)])[0].int64(0) == 998
        }
        #expect(try peers.relay().storedCount(victimBox) == 0, "nothing published into the removed member's mailbox")
        try creator.waitUntil("every remaining light member has carol's text", timeoutMs: 120_000) {
            try mailboxes.sweep()
            return light.all().filter { $0.key != victim.inboxId }.values.allSatisfy { $0.texts.values.contains(after) }
        }
        #expect(!light.member(victim.inboxId).texts.values.contains(after))
        #expect(mailboxes.received[victim.inboxId] ?? 0 == victimReceived)
        let pushes = try carol.query("SELECT payload FROM outbox WHERE messageId = ?", [.text(afterId)]).map { try $0.blob(0) }
        #expect(pushes.count == 998)
        let lightByClientId = Dictionary(uniqueKeysWithValues: light.identities.map { ($0.clientId, $0) })
        var opened = 0
        for push in pushes {
            let clientId = try PushPayload.decode(push).clientId
            #expect(clientId != victim.clientId)
            // A positive control: the member it was sealed to opens it, the removed one cannot.
            if let owner = lightByClientId[clientId] {
                _ = try PushOpener.open(push, identityForClientId: { (_) throws(KeystoreError) -> Identity in owner },
                                        topicForClientId: { (_) throws(PushError) -> String? in invite.topic })
                opened += 1
            }
            #expect(throws: PushError.self) {
                try PushOpener.open(push, identityForClientId: { (_) throws(KeystoreError) -> Identity in victim },
                                    topicForClientId: { (_) throws(PushError) -> String? in invite.topic })
            }
        }
        #expect(opened == Self.lightCount - 1)
        clock.lap("carol's text after the removal")

        // Nothing the conversation's devices should have consumed is left on the relay.
        let daemonBoxes = try ["creator", "bob", "carol"].map { try peers.mailbox($0, trip) }
        let allBoxes = Set((try light.identities.map { try Mailbox(clientId: $0.clientId).subject }) + daemonBoxes.map(\.subject))
        try creator.waitUntil("every mailbox of the conversation is empty", timeoutMs: 60_000) {
            try mailboxes.sweep()
            let counts = try peers.relay().storedCountsByMailbox()
            return counts.filter { allBoxes.contains($0.key) }.values.allSatisfy { $0 == 0 }
        }
        #expect(light.refused.isEmpty, "\(light.refused.prefix(3))")
        clock.lap("every mailbox empty")
        print("RelayThousandMemberTests phases: \(clock.report)")
    }
}
