import Foundation
import RelayTransport
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Issue #35's file to a 1,000-member conversation through one real nats-server: alice, bob
/// and carol are real daemons with their relayd and worker, the other 997 `LightMembers` on the
/// same relay (`ThousandMemberConversation`). Alice sends a 20 MiB file while bob's daemon is
/// down; the relay is read from its own side (JetStream's stream info, and nats-server's
/// monitoring `/varz` `in_bytes` around the send) to show the file is on it once, not once per
/// member, and every member's mailbox got one push.
@Suite("Relay: a 20 MiB file to a conversation of 1,000 members", .serialized,
       .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayThousandMemberAttachmentTests {
    static let size = 20 * 1_048_576

    @Test("a 20 MiB file from alice to 999 others: the relay stores it once (k pieces, its stored length, not ×999) and takes in at most 1.05 × (stored file + 999 pushes); one push per mailbox; bob, offline when it was sent, and carol each end with it available and save alice's bytes")
    func twentyMiBToAThousandMembers() async throws {
        // Minutes of blocking steps: on a thread of their own, not the test pool's (async tests starve).
        try await onOwnThread { try self.steps() }
    }

    private func steps() throws {
        var clock = PhaseClock()
        guard let peers = try RelayPeers.make(["alice", "bob", "carol"], monitored: true) else { return }
        clock.lap("nats-server, 3 daemons and their relayd started")
        defer {
            peers.tearDown()
            clock.lap("torn down")
            print("RelayThousandMemberAttachmentTests phases: \(clock.report)")
        }
        try peers.diagnosed { try self.steps(peers, clock: &clock) }
    }

    private func steps(_ peers: RelayPeers, clock: inout PhaseClock) throws {
        let alice = peers["alice"], bob = peers["bob"], carol = peers["carol"]
        let thousand = try ThousandMemberConversation.make(peers, creator: "alice", joiners: ["bob", "carol"], clock: &clock)
        let (trip, light, mailboxes) = (thousand.trip, thousand.light, thousand.mailboxes)
        defer { mailboxes.close() }

        // Bob is offline (his relayd and worker run on, as systemd keeps them); carol fetches
        // only when asked (`sotto save`), so nothing is fetched while the relay's intake is read.
        bob.stopDaemon()
        carol.stopDaemon()
        try carol.startDaemon(environment: [AttachmentFetcherSetting.variable: "0"])

        let path = peers.tmp.path + "/film.mkv"
        // Compared as Data (memcmp): a debug build compares 20 MiB arrays element by element, seconds each.
        let plaintext = Data(SecureRandom.bytes(Self.size))
        try plaintext.write(to: URL(fileURLWithPath: path))
        let relay = try peers.relay()
        let monitor = NatsMonitor(port: try #require(peers.server.monitorPort))
        let lightBoxes = try light.identities.map { try Mailbox(clientId: $0.clientId).subject }
        #expect(try relay.attachmentStreamUsage().messages == 0)
        let boxesBefore = try relay.storedCountsByMailbox()
        let mailboxStreamBefore = try relay.streamUsage()
        let inBefore = try Self.inBytes(monitor)
        clock.lap("bob offline, carol's automatic size 0, 20 MiB written")

        let sent = try alice.json(["send", trip, "--file", path])
        let id = try #require(sent["messageId"] as? String, "\(sent)")
        clock.lap("alice's send --file returned (stored, every piece on the relay, message committed)")
        try alice.waitUntil("alice's push relayed to all 999", timeoutMs: 240_000) {
            try alice.query("SELECT count(*) FROM outbox WHERE messageId = ? AND state IN ('relayed', 'sent', 'delivered')",
                            [.text(id)])[0].int64(0) == 999
        }
        let inAfter = try Self.inBytes(monitor)
        let boxesAfter = try relay.storedCountsByMailbox()
        let mailboxStreamAfter = try relay.streamUsage()
        clock.lap("the push relayed to 999 mailboxes")

        // One copy on the relay: k pieces, the stored file's length and little more.
        let reference = try AttachmentReference.decode(try #require(try alice.storedMessage(id: id)).content)
        let attachmentId = Hex.encode(reference.id)
        let stored = reference.length
        let pieces = AttachmentLayout.chunkCount(Self.size)
        #expect(stored == AttachmentLayout.storedLength(Self.size) && pieces == 320, "20 MiB: \(stored) bytes stored in \(pieces) pieces")
        #expect(try relay.storedAttachmentPieces(id: attachmentId) == Set(0..<pieces))
        let usage = try relay.attachmentStreamUsage()
        #expect(usage.messages == UInt64(pieces + 1), "one copy for 999 members, and its need: \(usage)")
        #expect(try relay.attachmentNeed(id: attachmentId) == 999)
        #expect(usage.bytes >= UInt64(stored) && usage.bytes < UInt64(stored) + UInt64(stored) / 100,
                "the stream holds \(usage.bytes) bytes for a stored file of \(stored) (per member it would be \(999 * stored))")

        // One push per member's mailbox: each light mailbox holds one more message (bob's and
        // carol's relayd took theirs to their workers).
        let added = lightBoxes.map { Int64(boxesAfter[$0] ?? 0) - Int64(boxesBefore[$0] ?? 0) }
        #expect(added.allSatisfy { $0 == 1 }, "pushes per light mailbox: \(Dictionary(grouping: added, by: { $0 }).mapValues(\.count))")
        for device in [bob, carol] {
            try device.waitUntil("\(device.name)'s worker stored the reference", timeoutMs: 60_000) { try device.storedMessage(id: id) != nil }
        }

        // What the relay took in while the file was sent and pushed, from its own counter: the
        // pieces once and 999 pushes (each as the mailbox stream stores it), not 999 copies.
        let pushBytes = (Double(mailboxStreamAfter.bytes) - Double(mailboxStreamBefore.bytes))
            / max(1, Double(mailboxStreamAfter.messages) - Double(mailboxStreamBefore.messages))
        let intake = inAfter - inBefore
        let bound = 1.05 * (Double(stored) + 999 * pushBytes)
        print(String(format: "RelayThousandMemberAttachmentTests: relay in_bytes +%lld for a stored file of %d bytes and 999 pushes of %.0f bytes: %.3f of 1.05 × (file + pushes) = %.0f; attachment stream %llu messages, %llu bytes",
                     intake, stored, pushBytes, Double(intake) / bound, bound, usage.messages, usage.bytes))
        #expect(intake >= Int64(stored), "the pieces went through the relay: \(intake) bytes in")
        #expect(Double(intake) <= bound, "\(intake) bytes in > 1.05 × (\(stored) + 999 × \(pushBytes))")

        // The light members open their pushes: the reference, once each.
        var sweeps: [LightMailboxes.Sweep] = []
        try alice.waitUntil("every light member has opened the file's message", timeoutMs: 120_000) {
            sweeps.append(try mailboxes.sweep())
            return light.all().values.allSatisfy { $0.opened.contains(id) }
        }
        #expect(sweeps.map(\.messages).reduce(0, +) == light.identities.count, "one push per light member: \(sweeps)")
        #expect(light.refused.isEmpty, "\(light.refused.prefix(3))")
        #expect(light.all().values.allSatisfy { $0.duplicates == 0 })
        clock.lap("997 light members opened the reference")

        // Bob comes back: his daemon fetches the file at once (20 MiB is under the default 25 MiB).
        try bob.startDaemon()
        try bob.waitUntil("bob's copy is available", timeoutMs: 300_000) {
            RelayReceivingAttachmentTests.state(peers, "bob", trip, id: id) == "available"
        }
        clock.lap("bob's daemon started and fetched 20 MiB")
        let storedFile = { (device: Device) in
            FileManager.default.contents(atPath: device.group.attachmentsPath(conversationId: trip) + "/" + id)
        }
        let alicesFile = try #require(storedFile(alice))
        #expect(storedFile(bob) == alicesFile, "bob holds alice's stored file, byte for byte")
        #expect(RelayReceivingAttachmentTests.files(bob, trip) == [id], "no partial file left")

        // Carol asks for it: `sotto save` fetches it and writes the plaintext; bob saves his copy.
        let out = peers.tmp.path + "/out"
        #expect(RelayReceivingAttachmentTests.state(peers, "carol", trip, id: id) == "waiting")
        for name in ["carol", "bob"] {
            try FileManager.default.createDirectory(atPath: out + "/" + name, withIntermediateDirectories: true)
            let saved = try peers[name].cli(["save", id, out + "/" + name])
            #expect(saved.status == 0, "\(name): \(saved)")
            #expect(FileManager.default.contents(atPath: out + "/\(name)/film.mkv") == plaintext, "\(name) saved alice's file, byte for byte")
            #expect(RelayReceivingAttachmentTests.state(peers, name, trip, id: id) == "available")
            clock.lap("\(name)'s sotto save\(name == "carol" ? " (fetched 20 MiB first)" : "")")
        }
        #expect(storedFile(carol) == alicesFile)
        #expect(RelayReceivingAttachmentTests.files(carol, trip) == [id], "no partial file left")
        // Two of the 999 have it: their two marks (empty messages, ~283 bytes each as stored) are all the stream gained.
        try carol.waitUntil("carol's mark is on the relay", timeoutMs: 60_000) { try relay.attachmentFetchedCount(id: attachmentId) == 2 }
        let usageAfter = try relay.attachmentStreamUsage()
        #expect(usageAfter.messages == usage.messages + 2 && usageAfter.bytes - usage.bytes < 1_000,
                "fetching twice stored nothing but two marks: \(usageAfter)")
    }

    /// nats-server's count of every byte clients published to it (`/varz` `in_bytes`).
    static func inBytes(_ monitor: NatsMonitor) throws -> Int64 {
        try #require((try monitor.json("/varz")["in_bytes"] as? NSNumber)?.int64Value)
    }
}
