import Foundation
import Glibc
import RelayTransport
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// The attachment stream through a real nats-server -js (docs/protocol/attachment-relay.md):
/// a stored file kept once in pieces, each piece checked as it arrives, transfers cut and
/// resumed from the last whole piece, hostile pieces and ids refused, and deletion that
/// leaves nothing behind, seen from the relay's side.
@Suite("Relay attachments", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayAttachmentTests {
    /// A random file of `size` bytes encrypted to its stored form `S`, both on disk.
    struct StoredFile {
        let directory: TemporaryDirectory
        let reference: AttachmentReference
        let stored: [UInt8]
        var id: String { Hex.encode(reference.id) }
        var storedPath: String { directory.path + "/stored" }

        static func make(size: Int, damageByteAt damaged: Int? = nil) throws -> StoredFile {
            let directory = try TemporaryDirectory(prefix: "ratt")
            var plain = [UInt8](repeating: 0, count: size)
            for index in plain.indices { plain[index] = UInt8.random(in: 0...255) }
            FileManager.default.createFile(atPath: directory.path + "/plain", contents: Data(plain))
            let source = open(directory.path + "/plain", O_RDONLY)
            let sink = open(directory.path + "/stored", O_RDWR | O_CREAT | O_TRUNC, 0o600)
            defer { close(source); close(sink) }
            let sealed = try AttachmentFile.encrypt(from: source, size: size, to: sink)
            var stored = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory.path + "/stored")))
            if let damaged {
                stored[damaged] ^= 0x01
                FileManager.default.createFile(atPath: directory.path + "/stored", contents: Data(stored))
            }
            return StoredFile(directory: directory, reference: sealed.reference(name: "f.bin", mediaType: "application/octet-stream"),
                              stored: stored)
        }

        func upload(over relay: RelayConnection, progress: (Int, Int) throws -> Void = { _, _ in }) throws -> Int {
            let fd = open(storedPath, O_RDONLY)
            defer { close(fd) }
            return try RelayAttachmentTransfer.upload(from: fd, storedLength: reference.length, id: id, over: relay, progress: progress)
        }

        /// Fetches into `path` (resuming what is there), every piece checked by a decryptor;
        /// the pieces fetched from the relay are counted in `fetched`.
        func fetch(over relay: RelayConnection, into path: String, stopAfter: Int? = nil) throws -> (resumedAt: Int, fetched: [Int]) {
            let fd = open(path, O_RDWR | O_CREAT, 0o600)
            defer { close(fd) }
            var decryptor = AttachmentDecryptor(reference)
            var seen: [Int] = []
            let resumedAt = try RelayAttachmentTransfer.fetch(id: id, storedLength: reference.length, over: relay, into: fd) { piece, bytes in
                if let stopAfter, piece >= stopAfter { throw Stop() }
                seen.append(piece)
                try decryptor.consume(bytes) { _ in }
            }
            try decryptor.finish()
            return (resumedAt, seen)
        }
    }

    struct Stop: Error {}

    static func relay(_ tmp: TemporaryDirectory) throws -> (NatsServer, RelayConnection) {
        let server = try NatsServer.start(storeDirectory: tmp.path + "/js")
        let relay = try RelayConnection.testPublisher(server.url)
        try relay.ensureAttachmentStream()
        return (server, relay)
    }

    /// kill -9 of the relay, started again on its store; returns once the connection is back.
    static func crashAndRestart(_ server: NatsServer, _ relay: RelayConnection) throws {
        server.kill9()
        try server.restart()
        try waitUntil("the connection is back", timeout: 30) { (try? relay.storedAttachmentPieces(id: String(repeating: "0", count: 32))) != nil }
    }

    @Test("a stored file is kept once, one piece per chunk: a second upload publishes nothing, a forged piece replaces nothing, garbage ids and pieces are refused")
    func storedOnce() throws {
        let tmp = try TemporaryDirectory(prefix: "ratt-once")
        let (server, relay) = try Self.relay(tmp)
        defer { server.stop() }
        try relay.ensureAttachmentStream()  // twice is fine
        let file = try StoredFile.make(size: 300_000)
        let pieces = AttachmentLayout.chunkCount(300_000)
        #expect(pieces == 5)
        #expect(try file.upload(over: relay) == pieces)
        #expect(try file.upload(over: relay) == 0, "every piece is there: nothing published again")
        #expect(try relay.storedAttachmentPieces(id: file.id) == Set(0..<pieces))
        let usage = try relay.attachmentStreamUsage()
        print("RELAY attachment stored once: \(usage.bytes) bytes on the relay for a stored file of \(file.reference.length) in \(pieces) pieces")
        #expect(usage.messages == UInt64(pieces))
        #expect(usage.bytes >= UInt64(file.reference.length) && usage.bytes < UInt64(file.reference.length) + UInt64(pieces) * 200,
                "the relay holds the stored file once: \(usage.bytes) bytes for \(file.reference.length)")

        // Someone who learnt the id cannot replace a piece: the relay keeps the first.
        let original = try #require(try relay.attachmentPiece(id: file.id, piece: 1))
        let forged = [UInt8](repeating: 0x41, count: original.count)
        let replaced = (try? relay.publishAttachmentPiece(forged, id: file.id, piece: 1)).map { !$0.duplicate } ?? false
        #expect(!replaced)
        #expect(try relay.attachmentPiece(id: file.id, piece: 1) == original)

        for (garbage, piece) in [("", 0), ("*", 0), (">", 0), (String(repeating: "A", count: 32), 0), (file.id + ".1", 0),
                                 (file.id, -1), (file.id, AttachmentPieces.maxPieces)] {
            #expect(throws: RelayError.self) { try relay.publishAttachmentPiece([1, 2, 3], id: garbage, piece: piece) }
            #expect(try relay.attachmentPiece(id: garbage, piece: piece) == nil)
        }
        #expect(try relay.attachmentStreamUsage().messages == UInt64(pieces), "nothing stored by the garbage")
        for garbage in [0, 1, 4119, 4121, 200_000_000] {
            #expect(throws: RelayAttachmentTransfer.Failure.notAStoredLength(garbage)) {
                try RelayAttachmentTransfer.upload(from: -1, storedLength: garbage, id: file.id, over: relay)
            }
        }
    }

    @Test("a fetch checks each piece as it arrives and writes S whole; a damaged chunk is refused at its piece, before the next is asked for")
    func fetchChecksEachPiece() throws {
        let tmp = try TemporaryDirectory(prefix: "ratt-fetch")
        let (server, relay) = try Self.relay(tmp)
        defer { server.stop() }
        let file = try StoredFile.make(size: 500_000)
        try file.upload(over: relay)
        let into = tmp.path + "/fetched"
        let (resumedAt, fetched) = try file.fetch(over: relay, into: into)
        #expect(resumedAt == 0)
        #expect(fetched == Array(0..<AttachmentLayout.chunkCount(500_000)))
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: into))) == file.stored)

        // A sender whose chunk 3 is damaged (a byte of its ciphertext): refused at piece 3.
        let damaged = try StoredFile.make(size: 500_000, damageByteAt: AttachmentPieces.range(3, storedLength: AttachmentLayout.storedLength(500_000)).lowerBound + 100)
        try damaged.upload(over: relay)
        let bad = tmp.path + "/damaged"
        var refusedAt: Int?
        do {
            _ = try damaged.fetch(over: relay, into: bad)
        } catch let failure as RelayAttachmentTransfer.Failure {
            if case .refused(let piece, let reason) = failure {
                refusedAt = piece
                #expect(reason.contains("bad_chunk") || reason.contains("badChunk"), "\(reason)")
            }
            #expect(!failure.isTransient)
        }
        #expect(refusedAt == 3)
        let written = try FileManager.default.attributesOfItem(atPath: bad)[.size] as? Int
        #expect(written == AttachmentPieces.range(2, storedLength: damaged.reference.length).upperBound,
                "pieces 0-2 written, nothing of piece 3 or after")
    }

    @Test("a member that stopped halfway: the fetch says which piece the relay does not hold, and a piece of the wrong size is refused")
    func missingAndWrongPieces() throws {
        let tmp = try TemporaryDirectory(prefix: "ratt-miss")
        let (server, relay) = try Self.relay(tmp)
        defer { server.stop() }
        let file = try StoredFile.make(size: 600_000)
        #expect(throws: RelayAttachmentTransfer.Failure.self) {
            try file.upload(over: relay) { done, _ in if done == 4 { throw Stop() } }
        }
        #expect(try relay.storedAttachmentPieces(id: file.id) == Set(0..<4))
        #expect(throws: RelayAttachmentTransfer.Failure.missingPiece(4)) { try file.fetch(over: relay, into: tmp.path + "/half") }

        // A hostile sender's piece 4 of the wrong size (one byte short).
        let range = AttachmentPieces.range(4, storedLength: file.reference.length)
        try relay.publishAttachmentPiece(Array(file.stored[range].dropLast()), id: file.id, piece: 4)
        #expect(throws: RelayAttachmentTransfer.Failure.wrongPieceLength(piece: 4, length: range.count - 1, expected: range.count)) {
            try file.fetch(over: relay, into: tmp.path + "/half")
        }
    }

    @Test("a transfer cut off resumes from the last whole piece, across a relay restart: the upload publishes only what is missing, the fetch keeps what it has and cuts a torn piece")
    func resumes() throws {
        let tmp = try TemporaryDirectory(prefix: "ratt-resume")
        let (server, relay) = try Self.relay(tmp)
        defer { server.stop() }
        let size = 1_500_000
        let file = try StoredFile.make(size: size)
        let pieces = AttachmentLayout.chunkCount(size)
        #expect(throws: RelayAttachmentTransfer.Failure.self) {
            try file.upload(over: relay) { done, _ in if done == 9 { throw Stop() } }
        }
        try Self.crashAndRestart(server, relay)
        #expect(try relay.storedAttachmentPieces(id: file.id) == Set(0..<9), "the relay kept the whole pieces across its restart")
        #expect(try file.upload(over: relay) == pieces - 9)

        let into = tmp.path + "/part"
        #expect(throws: RelayAttachmentTransfer.Failure.refused(piece: 7, reason: "Stop()")) { try file.fetch(over: relay, into: into, stopAfter: 7) }
        let whole = AttachmentPieces.range(6, storedLength: file.reference.length).upperBound
        #expect(try FileManager.default.attributesOfItem(atPath: into)[.size] as? Int == whole)
        // A write torn by a kill or a power cut: part of piece 7 on disk.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: into))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(file.stored[whole..<(whole + 1_000)]))
        try handle.close()
        try Self.crashAndRestart(server, relay)
        let (resumedAt, checked) = try file.fetch(over: relay, into: into)
        #expect(resumedAt == 7)
        #expect(checked == Array(0..<pieces), "every piece checked once, the kept ones read back")
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: into))) == file.stored)
    }

    @Test("deleting an attachment leaves no piece of it on the relay, and no other attachment's piece is touched")
    func deleteLeavesNothing() throws {
        let tmp = try TemporaryDirectory(prefix: "ratt-del")
        let (server, relay) = try Self.relay(tmp)
        defer { server.stop() }
        let gone = try StoredFile.make(size: 200_000), kept = try StoredFile.make(size: 70_000)
        try gone.upload(over: relay)
        try kept.upload(over: relay)
        try relay.deleteAttachment(id: gone.id)
        try relay.deleteAttachment(id: gone.id)  // twice is fine
        #expect(try relay.storedAttachmentPieces(id: gone.id).isEmpty)
        #expect(try relay.attachmentPiece(id: gone.id, piece: 0) == nil)
        #expect(try relay.storedAttachmentPieces(id: kept.id) == Set(0..<AttachmentLayout.chunkCount(70_000)))
        #expect(try relay.attachmentStreamUsage().messages == UInt64(AttachmentLayout.chunkCount(70_000)))
        #expect(throws: RelayError.self) { try relay.deleteAttachment(id: ">") }
        #expect(throws: RelayAttachmentTransfer.Failure.missingPiece(0)) { try gone.fetch(over: relay, into: tmp.path + "/gone") }
    }

    @Test("in operator mode a device user made with the signing key uploads, fetches and deletes an attachment in the stream the operator made, and may not touch the mailboxes' stream")
    func operatorMode() throws {
        let tmp = try TemporaryDirectory(prefix: "ratt-op")
        let setup = try RelayOperatorSetup.make(directory: tmp.path + "/operator")
        let server = try setup.startServer(storeDirectory: tmp.path + "/js")
        defer { server.stop() }
        let device = try RelayConnection.connect(try setup.deviceConfiguration(server))
        try device.ensureAttachmentStream()  // made by the operator: found, not created
        let file = try StoredFile.make(size: 140_000)
        #expect(try file.upload(over: device) == AttachmentLayout.chunkCount(140_000))
        let (_, fetched) = try file.fetch(over: device, into: tmp.path + "/fetched")
        #expect(fetched.count == AttachmentLayout.chunkCount(140_000))
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: tmp.path + "/fetched"))) == file.stored)
        try device.deleteAttachment(id: file.id)
        #expect(try setup.adminConnection(server).attachmentStreamUsage().messages == 0, "deleted, seen by the operator")
        let mailbox = try Mailbox(clientId: "0b9a2f4e-1c3d-4e5f-8a7b-6c5d4e3f2a1b")
        #expect(throws: RelayError.self) { try device.purge(mailbox) }
    }
}
