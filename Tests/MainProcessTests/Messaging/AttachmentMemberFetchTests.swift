import Foundation
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// A file on direct endpoints fetched from another member's device when the sender's cannot
/// give it (docs/adr/0081, docs/protocol/attachment-direct.md §6): the sender off, a member's
/// copy damaged, the pieces resumed across devices. Real daemons and real workers under
/// `systemd-socket-activate --accept`.
@Suite("Messaging: files fetched from another member's device", .serialized, .timeLimit(.minutes(10)))
struct AttachmentMemberFetchTests {
    /// Alice sends a file to bob and carol (carol fetches only when asked); returns once bob
    /// has it whole. Bob's daemon fetches at once (the default automatic size).
    static func sentAndFetchedByBob(_ net: Network, count: Int) throws -> (trip: String, id: String, path: String) {
        let (alice, bob, carol) = (net["alice"], net["bob"], net["carol"])
        carol.stopDaemon()
        try carol.startDaemon(environment: AttachmentDirectFetchTests.noAutomaticFetch)
        let trip = try net.conversation(creator: alice, joiners: [bob, carol])
        let path = net.tmp.path + "/minutes.pdf"
        _ = try AttachmentSendTests.writeFile(path, count: count)
        let id = try AttachmentDirectFetchTests.sent(alice, trip, path)
        try bob.waitUntil("bob has it whole", timeoutMs: 60_000) { AttachmentDirectFetchTests.state(bob, trip, id) == "available" }
        try carol.waitUntil("carol has the reference", timeoutMs: 60_000) { AttachmentDirectFetchTests.state(carol, trip, id) == "waiting" }
        return (trip, id, path)
    }

    @Test("alice's device is off when carol asks for the file: carol's daemon fetches it from bob's device, which has it whole, and saves alice's bytes")
    func senderOff() throws {
        let net = try Network(["alice", "bob", "carol"])
        let (alice, bob, carol) = (net["alice"], net["bob"], net["carol"])
        let (trip, id, path) = try Self.sentAndFetchedByBob(net, count: 300_000)
        alice.stopPushSocket()

        let out = try AttachmentSaveTests.makeDirectory(net.tmp.path + "/out")
        let saved = try carol.cli(["save", id, out])
        #expect(saved.status == 0, "\(saved)")
        #expect(FileManager.default.contentsEqual(atPath: path, andPath: out + "/minutes.pdf"), "carol saved alice's file")
        #expect(FileManager.default.contentsEqual(atPath: carol.group.storedAttachmentPath(conversationId: trip, messageId: id),
                                                   andPath: alice.group.storedAttachmentPath(conversationId: trip, messageId: id)))
        #expect(carol.daemonLog.contains("the sender's device ("), "carol asked alice's device first: \(carol.daemonLog.suffix(2_000))")
        #expect(carol.daemonLog.contains("asking the next member's device"))
        #expect(bob.pushLog.contains("attachment served: message=\(id.prefix(8)) pieces 0..<5 of 5"), "bob's worker served all of it")
    }

    @Test("alice's device is off and bob's copy is damaged at piece 2: carol takes pieces 0-1 from bob, refuses his piece 2, keeps them, and once alice is back gets pieces 2-4 from her; whole, alice's bytes")
    func damagedCopyThenTheSender() throws {
        let net = try Network(["alice", "bob", "carol"])
        let (alice, bob, carol) = (net["alice"], net["bob"], net["carol"])
        let (trip, id, path) = try Self.sentAndFetchedByBob(net, count: 300_000)
        alice.stopPushSocket()
        // One bit of piece 2 flipped in bob's copy (its length unchanged, so his worker serves it).
        let bobs = bob.group.storedAttachmentPath(conversationId: trip, messageId: id)
        let reference = try AttachmentSendTests.reference(bob, id: id)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: bobs))
        let offset = UInt64(AttachmentPieces.range(2, storedLength: reference.length).lowerBound + 100)
        try handle.seek(toOffset: offset)
        let byte = try #require(try handle.read(upToCount: 1)).first! ^ 0x01
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: [byte])
        try handle.close()

        let out = try AttachmentSaveTests.makeDirectory(net.tmp.path + "/out")
        let save = try SpawnedProcess.launch(try builtExecutable("sotto"), ["save", id, out], environment: carol.environment,
                                             log: net.tmp.path + "/save.log")
        try carol.waitUntil("carol's first round ends: alice unreachable, bob's piece 2 refused", timeoutMs: 60_000) {
            carol.daemonLog.contains("trying again in 2 s from its last whole piece")
        }
        let partial = carol.group.attachmentsPath(conversationId: trip) + "/.\(id).partial"
        let held = try #require(FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int, "the partial file stays")
        #expect(held == AttachmentPieces.range(1, storedLength: reference.length).upperBound, "pieces 0-1 kept: \(held) bytes")
        #expect(carol.daemonLog.contains("piece 2 refused"), "\(carol.daemonLog.suffix(2_000))")

        try alice.startPushSocket()
        save.waitUntilExit()
        #expect(save.terminationStatus == 0, "\((try? String(contentsOfFile: net.tmp.path + "/save.log", encoding: .utf8)) ?? "")")
        #expect(FileManager.default.contentsEqual(atPath: path, andPath: out + "/minutes.pdf"), "carol saved alice's file")
        #expect(alice.pushLog.contains("attachment served: message=\(id.prefix(8)) pieces 2..<5 of 5"), "alice served from piece 2 on")
        #expect(AttachmentDirectFetchTests.state(carol, trip, id) == "available")
    }
}
