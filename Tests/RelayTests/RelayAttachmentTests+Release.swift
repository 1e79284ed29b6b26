import Foundation
import RelayTransport
import SottoCrypto
import SottoWire
import TestSupport
import Testing

// MARK: - Deleted once every member has it (docs/protocol/attachment-relay.md §6.1)

extension RelayAttachmentTests {
    /// Two members' marks, one file.
    static let marks = (String(repeating: "a1", count: 16), String(repeating: "b2", count: 16))

    @Test("a file whose need is 2: the first member's mark keeps it (twice, still one mark), the second's deletes every piece, the need and the marks; another file is untouched")
    func lastMarkDeletes() throws {
        let tmp = try TemporaryDirectory(prefix: "ratt-release")
        let (server, relay) = try Self.relay(tmp)
        defer { server.stop() }
        let file = try StoredFile.make(size: 200_000), other = try StoredFile.make(size: 70_000)
        let pieces = AttachmentLayout.chunkCount(200_000), otherPieces = AttachmentLayout.chunkCount(70_000)
        try file.upload(over: relay)
        try relay.publishAttachmentNeed(id: file.id, count: 2)
        try relay.publishAttachmentNeed(id: file.id, count: 1)  // the first need is the one kept
        try other.upload(over: relay)
        try relay.publishAttachmentNeed(id: other.id, count: 1)
        #expect(try relay.attachmentNeed(id: file.id) == 2)

        #expect(try RelayAttachmentTransfer.release(id: file.id, token: Self.marks.0, over: relay) == .kept(fetched: 1, need: 2))
        #expect(try RelayAttachmentTransfer.release(id: file.id, token: Self.marks.0, over: relay) == .kept(fetched: 1, need: 2))
        #expect(try relay.storedAttachmentPieces(id: file.id) == Set(0..<pieces), "one member still needs it")

        #expect(try RelayAttachmentTransfer.release(id: file.id, token: Self.marks.1, over: relay) == .deleted(fetched: 2))
        #expect(try relay.storedAttachmentPieces(id: file.id).isEmpty)
        #expect(try relay.attachmentNeed(id: file.id) == nil && relay.attachmentFetchedCount(id: file.id) == 0, "the need and the marks went too")
        #expect(try relay.attachmentStreamUsage().messages == UInt64(otherPieces + 1), "the other file's pieces and need only")
        #expect(throws: RelayAttachmentTransfer.Failure.missingPiece(0)) { try file.fetch(over: relay, into: tmp.path + "/late") }
    }

    @Test("no need on the relay, or a need that is not a count (0, 07, 1000, +2, a space, empty, letters): marks never delete the file")
    func noCountNoDelete() throws {
        let tmp = try TemporaryDirectory(prefix: "ratt-noneed")
        let (server, relay) = try Self.relay(tmp)
        defer { server.stop() }
        let pieces = AttachmentLayout.chunkCount(70_000)
        let none = try StoredFile.make(size: 70_000)
        try none.upload(over: relay)
        #expect(try RelayAttachmentTransfer.release(id: none.id, token: Self.marks.0, over: relay) == .kept(fetched: 1, need: nil))
        #expect(try relay.storedAttachmentPieces(id: none.id) == Set(0..<pieces))

        for garbage in ["0", "07", "1000", "+2", "2 ", "", "two", "-1"] {
            let file = try StoredFile.make(size: 70_000)
            try file.upload(over: relay)
            // What a hostile client that learned the id first publishes, acked by the stream.
            let answer = relay.rawRequest(AttachmentStream.needSubject(id: file.id)!, garbage)
            #expect(answer.reply?.contains("\"seq\"") == true, "'\(garbage)' stored: \(answer)")
            for token in [Self.marks.0, Self.marks.1] {
                #expect(try RelayAttachmentTransfer.release(id: file.id, token: token, over: relay).isKept, "'\(garbage)'")
            }
            #expect(try relay.storedAttachmentPieces(id: file.id) == Set(0..<pieces), "'\(garbage)' is not a count: the file stays")
        }
        #expect(throws: RelayError.self) { try relay.publishAttachmentNeed(id: none.id, count: 0) }
        #expect(throws: RelayError.self) { try relay.publishAttachmentNeed(id: none.id, count: 1_000) }
        #expect(throws: RelayError.self) { try relay.markAttachmentFetched(id: none.id, token: "*") }
        #expect(throws: RelayError.self) { try relay.markAttachmentFetched(id: ">", token: Self.marks.0) }
    }

    @Test("in operator mode a device user publishes a need and a mark and, as the last member, deletes the file from the stream the operator made")
    func operatorModeRelease() throws {
        let tmp = try TemporaryDirectory(prefix: "ratt-op-release")
        let setup = try RelayOperatorSetup.make(directory: tmp.path + "/operator")
        let server = try setup.startServer(storeDirectory: tmp.path + "/js")
        defer { server.stop() }
        let device = try RelayConnection.connect(try setup.deviceConfiguration(server))
        try device.ensureAttachmentStream()
        let file = try StoredFile.make(size: 70_000)
        try file.upload(over: device)
        try device.publishAttachmentNeed(id: file.id, count: 1)
        #expect(try RelayAttachmentTransfer.release(id: file.id, token: Self.marks.0, over: device) == .deleted(fetched: 1))
        #expect(try setup.adminConnection(server).attachmentStreamUsage().messages == 0, "deleted, seen by the operator")
    }
}

extension RelayAttachmentTransfer.Release {
    var isKept: Bool {
        if case .kept = self { return true }
        return false
    }
}

// MARK: - A full relay (docs/protocol/attachment-relay.md §6.1)

extension RelayAttachmentTests {
    /// A connection to a relay whose attachment stream an operator capped at `maxBytes`.
    static func cappedRelay(_ tmp: TemporaryDirectory, maxBytes: Int) throws -> (NatsServer, RelayConnection) {
        let server = try NatsServer.start(storeDirectory: tmp.path + "/js")
        let relay = try RelayConnection.testPublisher(server.url)
        #expect(relay.capAttachmentStream(maxBytes: maxBytes), "the quota is set")
        return (server, relay)
    }

    @Test("a relay full to the last byte: the last member's mark is refused, yet it counts, and the file is deleted, freeing the room; a member that is not the last is told the refusal and the file stays")
    func fullRelayStillReleases() throws {
        let tmp = try TemporaryDirectory(prefix: "ratt-full")
        let (server, relay) = try Self.cappedRelay(tmp, maxBytes: 400_000)
        defer { server.stop() }
        let last = try StoredFile.make(size: 70_000), notLast = try StoredFile.make(size: 70_000)
        for (file, need) in [(last, 2), (notLast, 3)] {
            try file.upload(over: relay)
            try relay.publishAttachmentNeed(id: file.id, count: need)
            #expect(try RelayAttachmentTransfer.release(id: file.id, token: Self.marks.0, over: relay) == .kept(fetched: 1, need: need))
        }
        // Another file takes the rest of the quota (its upload stops when a piece no longer fits),
        // then marks of a made-up file the last bytes: a mark is as large as any other mark.
        let filler = try StoredFile.make(size: 1_000_000)
        #expect(throws: RelayAttachmentTransfer.Failure.self) { try filler.upload(over: relay) }
        let madeUp = Hex.encode(SecureRandom.bytes(16))
        var full = false
        for _ in 0..<1_000 where !full {
            do { try relay.markAttachmentFetched(id: madeUp, token: Hex.encode(SecureRandom.bytes(16))) } catch { full = true }
        }
        #expect(full, "the stream filled up")

        #expect(throws: RelayError.self, "one of three: not the last, so the refusal is what it gets") {
            try RelayAttachmentTransfer.release(id: notLast.id, token: Self.marks.1, over: relay)
        }
        #expect(try relay.storedAttachmentPieces(id: notLast.id) == Set(0..<2))
        #expect(try RelayAttachmentTransfer.release(id: last.id, token: Self.marks.1, over: relay) == .deleted(fetched: 2))
        #expect(try relay.storedAttachmentPieces(id: last.id).isEmpty && relay.attachmentNeed(id: last.id) == nil)
        try relay.markAttachmentFetched(id: notLast.id, token: Self.marks.1)  // the room the purge freed takes a mark again
        #expect(try relay.attachmentFetchedCount(id: notLast.id) == 2)
    }
}
