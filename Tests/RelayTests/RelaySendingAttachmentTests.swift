import Foundation
import RelayTransport
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// The daemon putting a sent file on its members' relay before any push names it
/// (docs/protocol/attachment-relay.md §4, docs/adr/0076), seen from the relay's side. All
/// real: daemons, sotto-relayd, workers, nats-server.
@Suite("Relay sending: attachments", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelaySendingAttachmentTests {
    static func writeFile(_ path: String, count: Int) throws -> [UInt8] {
        let bytes = (0..<count).map { _ in UInt8.random(in: 0...255) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return bytes
    }

    static func attachment(_ peers: RelayPeers, _ name: String, _ conversation: String, id: String) -> [String: Any]? {
        peers.message(name, conversation, id: id)?["attachment"] as? [String: Any]
    }

    @Test("alice sends a file to bob and carol on one relay: its pieces are on the relay once, exactly the stored file, with a need of 2, before the pushes; each member has the reference")
    func storedOnceOnTheRelay() throws {
        guard let peers = try RelayPeers.make(["alice", "bob", "carol"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiners: ["bob", "carol"])
            for member in ["bob", "carol"] {  // neither fetches: the last would delete the file (attachment-relay.md §6.1)
                peers[member].stopDaemon()
                try peers[member].startDaemon(environment: [AttachmentFetcherSetting.variable: "0"])
            }
            let path = peers.tmp.path + "/minutes.pdf"
            let original = try Self.writeFile(path, count: 300_000)
            let sent = try peers["alice"].json(["send", trip, "--file", path])
            let id = try #require(sent["messageId"] as? String, "\(sent)")

            let row = try #require(try peers["alice"].storedMessage(id: id))
            let reference = try AttachmentReference.decode(row.content)
            let attachmentId = Hex.encode(reference.id)
            let pieces = AttachmentLayout.chunkCount(original.count)
            let relay = try peers.relay()
            #expect(try relay.storedAttachmentPieces(id: attachmentId) == Set(0..<pieces))
            let usage = try relay.attachmentStreamUsage()
            #expect(usage.messages == UInt64(pieces + 1), "one copy for two members, and its need: \(usage)")
            #expect(try relay.attachmentNeed(id: attachmentId) == 2)
            #expect(usage.bytes < UInt64(reference.length) * 105 / 100, "\(usage.bytes) bytes for a stored file of \(reference.length)")
            var relayed: [UInt8] = []
            for piece in 0..<pieces { relayed += try #require(try relay.attachmentPiece(id: attachmentId, piece: piece)) }
            let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: peers["alice"].group.attachmentsPath(conversationId: trip) + "/" + id)))
            #expect(relayed == stored, "the relay holds the stored file, byte for byte")

            for member in ["bob", "carol"] {
                try peers[member].waitUntil("\(member) has the reference", timeoutMs: 60_000) { Self.attachment(peers, member, trip, id: id) != nil }
            }
        }
    }

    @Test("the relay down when alice sends a file: refused with the relay's reason, and neither the stored file nor the message is kept")
    func relayDownSendsNothing() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let before = try peers["alice"].query("SELECT count(*) FROM message WHERE conversationId = ?", [.text(trip)])[0].int64(0)
            peers.server.stop()
            let path = peers.tmp.path + "/photo.jpg"
            _ = try Self.writeFile(path, count: 100_000)
            let refused = try peers["alice"].cli(["send", trip, "--file", path])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("did not take the file") && refused.stderr.contains("nothing was sent"), "\(refused)")
            #expect(try peers["alice"].query("SELECT count(*) FROM message WHERE conversationId = ?", [.text(trip)])[0].int64(0) == before)
            let directory = peers["alice"].group.attachmentsPath(conversationId: trip)
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).isEmpty, "no stored file left")
        }
    }

    @Test("a relay whose attachment stream is full (an operator's 1 MiB quota): a file that does not fit is refused with the relay's reason, nothing kept on alice and none of its pieces left on the relay; a file that fits still goes and bob gets it")
    func fullRelayRefusesTheSend() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let alice = peers["alice"]
            // The operator's stream: Sotto's settings (docs/protocol/attachment-relay.md §3) and a 1 MiB quota.
            let relay = try peers.relay()
            #expect(relay.capAttachmentStream(maxBytes: 1_048_576), "the quota is set")
            let before = try alice.query("SELECT count(*) FROM message WHERE conversationId = ?", [.text(trip)])[0].int64(0)

            let path = peers.tmp.path + "/film.mp4"
            _ = try Self.writeFile(path, count: 2_000_000)
            let refused = try alice.cli(["send", trip, "--file", path])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("did not take the file") && refused.stderr.contains("nothing was sent"), "\(refused)")
            #expect(refused.stderr.lowercased().contains("maximum bytes"), "the relay's own reason: \(refused.stderr)")
            #expect(try alice.query("SELECT count(*) FROM message WHERE conversationId = ?", [.text(trip)])[0].int64(0) == before)
            let directory = alice.group.attachmentsPath(conversationId: trip)
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).isEmpty, "no stored file left")
            #expect(try relay.attachmentStreamUsage().messages == 0, "the pieces that fitted were deleted again")

            let small = peers.tmp.path + "/note.txt"
            let original = try Self.writeFile(small, count: 300_000)
            let id = try #require(try alice.json(["send", trip, "--file", small])["messageId"] as? String)
            try peers["bob"].waitUntil("bob's daemon fetches it", timeoutMs: 60_000) {
                Self.attachment(peers, "bob", trip, id: id)?["state"] as? String == "available"
            }
            let out = peers.tmp.path + "/out"
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            #expect(try peers["bob"].cli(["save", id, out]).status == 0)
            #expect(FileManager.default.contents(atPath: out + "/note.txt").map { [UInt8]($0) } == original)
        }
    }

    @Test("alice killed with the file's pieces on the relay and no message (attachment.uploaded): the restart sweeps the stored file, no push names the pieces, and a new send goes out whole")
    func killedAfterTheUpload() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let alice = peers["alice"]
            let path = peers.tmp.path + "/plan.txt"
            _ = try Self.writeFile(path, count: 70_000)
            alice.stopDaemon()
            try alice.startDaemon(environment: [CrashPoint.variable: "attachment.uploaded"])
            #expect(try alice.cli(["send", trip, "--file", path]).status != 0)
            #expect(try alice.diedAtCrashPoint("attachment.uploaded", timeoutMs: 30_000), "attachment.uploaded was never reached")
            #expect(try peers.relay().attachmentStreamUsage().messages == 3, "the pieces and the need went up before the crash")
            try alice.startDaemon()
            let directory = alice.group.attachmentsPath(conversationId: trip)
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).isEmpty, "the restart swept the file with no message")
            #expect(try alice.query("SELECT count(*) FROM message WHERE contentType = ?", [.text(ContentType.attachment)])[0].int64(0) == 0)

            let sent = try alice.json(["send", trip, "--file", path])
            let id = try #require(sent["messageId"] as? String, "\(sent)")
            try peers["bob"].waitUntil("bob fetched the new file, and the relay deleted it (he was the last who needed it)", timeoutMs: 60_000) {
                try Self.attachment(peers, "bob", trip, id: id)?["state"] as? String == "available"
                    && peers.relay().attachmentStreamUsage().messages == 3
            }
            #expect(try peers.relay().attachmentStreamUsage().messages == 3, "the orphaned pieces and need stay (unreadable, expiring)")
        }
    }
}
