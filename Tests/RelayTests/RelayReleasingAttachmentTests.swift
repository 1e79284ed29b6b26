import Foundation
import RelayTransport
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// A file leaves the relay when the last member that fetches it there has it
/// (docs/protocol/attachment-relay.md §6.1, docs/adr/0080), read from the relay's side: its
/// attachment stream's subjects. All real: daemons, sotto-relayd, workers, nats-server.
@Suite("Relay releasing: attachments", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayReleasingAttachmentTests {
    /// Alice sends `count` bytes to bob, who fetches at once, and carol, who fetches only when
    /// asked; returns once bob's mark is on the relay.
    static func sentAndFetchedByBob(_ peers: RelayPeers, count: Int) throws
        -> (trip: String, id: String, original: [UInt8], attachmentId: String, relay: RelayConnection) {
        let trip = try peers.conversation(creator: "alice", joiners: ["bob", "carol"])
        peers["carol"].stopDaemon()
        try peers["carol"].startDaemon(environment: [AttachmentFetcherSetting.variable: "0"])
        let (id, original) = try RelayReceivingAttachmentTests.send(peers, trip, count: count)
        let attachmentId = Hex.encode(try AttachmentReference.decode(try #require(try peers["alice"].storedMessage(id: id)).content).id)
        let relay = try peers.relay()
        try peers["bob"].waitUntil("bob's mark is on the relay", timeoutMs: 60_000) { try relay.attachmentFetchedCount(id: attachmentId) == 1 }
        return (trip, id, original, attachmentId, relay)
    }

    @Test("alice sends to bob and carol: the relay holds the pieces and a need of 2; bob's fetch leaves one mark and the file; carol's `sotto save` deletes every piece, the need and the marks, and both saved alice's bytes")
    func lastFetcherDeletes() throws {
        guard let peers = try RelayPeers.make(["alice", "bob", "carol"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let (trip, id, original, attachmentId, relay) = try Self.sentAndFetchedByBob(peers, count: 300_000)
            let carol = peers["carol"]
            let pieces = AttachmentLayout.chunkCount(300_000)
            #expect(try relay.attachmentNeed(id: attachmentId) == 2, "bob and carol fetch from this relay")
            #expect(RelayReceivingAttachmentTests.state(peers, "bob", trip, id: id) == "available")
            #expect(try relay.storedAttachmentPieces(id: attachmentId) == Set(0..<pieces), "carol still needs it")
            #expect(try relay.attachmentStreamUsage().messages == UInt64(pieces + 2), "the pieces, the need, bob's mark")

            let out = peers.tmp.path + "/out"
            let save = { (name: String) throws -> Data? in
                try FileManager.default.createDirectory(atPath: out + "/" + name, withIntermediateDirectories: true)
                let saved = try peers[name].cli(["save", id, out + "/" + name])
                #expect(saved.status == 0, "\(name): \(saved)")
                #expect(RelayReceivingAttachmentTests.stored(peers[name], trip, id) == original, "\(name) holds alice's stored file")
                return FileManager.default.contents(atPath: out + "/\(name)/scan.pdf")
            }
            let carols = try #require(try save("carol"))
            try carol.waitUntil("the relay holds nothing of the file", timeoutMs: 60_000) { try relay.attachmentStreamUsage().messages == 0 }
            #expect(try relay.storedAttachmentPieces(id: attachmentId).isEmpty && relay.attachmentNeed(id: attachmentId) == nil)
            #expect(carol.daemonLog.contains("has it (2); deleted there"), "carol's daemon says why the file left the relay")
            #expect(try save("bob") == carols, "bob saves his own copy after the relay's is gone")
        }
    }
}

extension RelayReleasingAttachmentTests {
    @Test("carol leaves without fetching the file: her leave marks it not needed, and as bob has it, the relay deletes it; bob still saves his copy")
    func leaveCountsAsHavingIt() throws {
        guard let peers = try RelayPeers.make(["alice", "bob", "carol"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let (trip, id, original, attachmentId, relay) = try Self.sentAndFetchedByBob(peers, count: 70_000)
            let carol = peers["carol"]
            try carol.waitUntil("carol has the reference", timeoutMs: 60_000) {
                RelayReceivingAttachmentTests.state(peers, "carol", trip, id: id) == "waiting"
            }
            #expect(try relay.storedAttachmentPieces(id: attachmentId) == Set(0..<AttachmentLayout.chunkCount(70_000)))

            _ = try carol.json(["leave", trip])
            try carol.waitUntil("the relay holds nothing of the file", timeoutMs: 60_000) { try relay.attachmentStreamUsage().messages == 0 }
            #expect(carol.daemonLog.contains("1 file(s) never fetched marked as not needed (1 then deleted from their relay)"),
                    "carol's daemon says what its leave told the relay")
            let out = peers.tmp.path + "/out"
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            #expect(try peers["bob"].cli(["save", id, out]).status == 0)
            #expect(RelayReceivingAttachmentTests.stored(peers["bob"], trip, id) == original)
        }
    }
}
