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
        let trip = try peers.conversation(creator: "creator", joiners: ["bob", "carol"])
        clock.lap("3 daemons with relayd, bob and carol joined")

        let light = LightMembers(count: Self.lightCount, endpoint: peers.server.url)
        let mailboxes = try LightMailboxes(light, relayURL: peers.server.url)
        defer { mailboxes.close() }
        clock.lap("997 light members' consumers made")

        // 997 join requests published into the creator's mailbox while its daemon is down:
        // its relayd hands them to its worker, and at launch the daemon accepts them together.
        let invite = try InviteCode.parse(try #require(try creator.json(["invite", trip, "--expires", "1h"])["code"] as? String))
        let requests = try light.joinRequests(invite: invite, topicInClear: false)
        creator.stopDaemon()
        let creatorBox = try peers.mailbox("creator", trip)
        let published = try peers.relay().publishAll(requests.map {
            BatchPush(payload: $0, mailbox: creatorBox, messageId: Hex.encode(SHA256.hash($0)))
        })
        #expect(published.allSatisfy { if case .success(let ack) = $0 { !ack.duplicate } else { false } })
        try creator.waitUntil("the creator's worker stored 997 join requests", timeoutMs: 120_000) {
            try creator.query("SELECT count(*) FROM join_request WHERE conversationId = ? AND state = 'pending'",
                              [.text(trip)])[0].int64(0) == Int64(Self.lightCount)
        }
        clock.lap("997 join requests through the relay into the creator's worker")
        try creator.startDaemon()
        try creator.waitUntil("the creator lists 1,000 members", timeoutMs: 120_000) {
            try creator.conversation(trip)?["members"] as? Int == 1_000
        }
        clock.lap("the creator's daemon accepted them")

        // Every device converges on the creator's roster and version.
        let roster = { (device: Device) throws -> Set<String> in
            Set(try device.query("SELECT inboxId FROM member WHERE conversationId = ?", [.text(trip)]).map { try $0.string(0) })
        }
        let version = { (device: Device) throws -> Int64 in
            try device.query("SELECT rosterVersion FROM conversation WHERE id = ?", [.text(trip)]).first?.int64(0) ?? -1
        }
        let expected = try roster(creator)
        let expectedVersion = try version(creator)
        #expect(expected.count == 1_000 && expected.isSuperset(of: light.inboxIds))
        #expect(expectedVersion == 3, "bob's join, carol's, then the 997 together")
        for device in [bob, carol] {
            try device.waitUntil("\(device.name) has the 1,000-member roster", timeoutMs: 120_000) {
                try version(device) == expectedVersion && roster(device) == expected
            }
        }
        clock.lap("bob and carol at the roster")
        var sweeps: [LightMailboxes.Sweep] = []
        do {
            try creator.waitUntil("every light member has the 1,000-member roster", timeoutMs: 180_000) {
                sweeps.append(try mailboxes.sweep())
                return light.all().values.allSatisfy { $0.version == expectedVersion && $0.roster == expected }
            }
        } catch {
            let versions = Dictionary(grouping: light.all().values, by: { "v\($0.version) \($0.roster.count) members" }).mapValues(\.count)
            let outbox = try creator.query("""
                SELECT m.contentType, o.state, coalesce(o.lastError, ''), count(*) FROM outbox o
                JOIN message m ON m.id = o.messageId GROUP BY 1, 2, 3
                """).map { "\(try $0.string(0)) \(try $0.string(1)) \(try $0.string(2)) x\(try $0.int64(3))" }
            Issue.record("light members: \(versions); sweeps: \(sweeps.suffix(3).map(\.description)) of \(sweeps.count); refused: \(light.refused.prefix(3)); creator outbox: \(outbox); stored on the relay: \(try peers.relay().storedCount())")
            throw error
        }
        #expect(light.refused.isEmpty, "\(light.refused.prefix(3))")
        #expect(sweeps.map(\.bodiesFetched).reduce(0, +) == 1, "one full-roster body for the 997 joiners")
        clock.lap("997 light members at the roster (\(sweeps.count) sweeps: \(sweeps.map(\.description)); \(light.load))")

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

/// Wall time of each named phase, printed at the end of a long test.
private struct PhaseClock {
    private var last = MonotonicClock.nowNs()
    private(set) var phases: [(String, UInt64)] = []

    mutating func lap(_ what: String) {
        let now = MonotonicClock.nowNs()
        phases.append((what, (now - last) / 1_000_000))
        FileHandle.standardError.write(Data("phase: \(what): \((now - last) / 1_000_000) ms\n".utf8))
        last = now
    }

    var report: String { phases.map { "\($0.0): \($0.1) ms" }.joined(separator: "; ") }
}
