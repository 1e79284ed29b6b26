import Foundation
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Files between devices on direct endpoints (issue #35, docs/protocol/attachment-direct.md,
/// docs/adr/0079): the recipient's daemon fetches the stored file from the sender's real worker
/// on its real push socket (`systemd-socket-activate --accept`, one process per connection),
/// each piece checked before it is written, resuming from the last whole piece whichever side
/// is killed.
@Suite("Messaging: files fetched from the sender's device", .serialized, .timeLimit(.minutes(10)))
struct AttachmentDirectFetchTests {
    /// A device's daemon that fetches nothing by itself: its files stay `waiting`.
    static let noAutomaticFetch = ["SOTTO_ATTACHMENT_AUTO_FETCH_BYTES": "0"]
    /// A device's daemon that fetches every file as it arrives (up to 100 MiB).
    static let fetchEverything = ["SOTTO_ATTACHMENT_AUTO_FETCH_BYTES": String(AttachmentLayout.maxSize)]

    // MARK: Helpers

    /// A file of `mebibytes` MiB, each MiB different (fast to make, no two pieces alike).
    static func writeFile(_ path: String, mebibytes: Int) throws {
        let block = try AttachmentSendTests.writeFile(path, count: 1 << 20)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        for index in 1..<mebibytes { try handle.write(contentsOf: block.map { $0 &+ UInt8(truncatingIfNeeded: index) }) }
        try handle.close()
    }

    static func attachment(_ device: Device, _ conversation: String, _ id: String) -> [String: Any]? {
        AttachmentSendTests.read(device, conversation, id: id)?["attachment"] as? [String: Any]
    }

    static func state(_ device: Device, _ conversation: String, _ id: String) -> String? {
        attachment(device, conversation, id)?["state"] as? String
    }

    static func sent(_ device: Device, _ conversation: String, _ path: String) throws -> String {
        try require(try device.json(["send", conversation, "--file", path])["messageId"] as? String, "messageId")
    }

    // MARK: The whole file

    @Test("100 MiB from alice's daemon to bob's, both on direct endpoints: fetched from alice's worker in the background, whole under its name only at the end, saved byte for byte; bob's daemon grows < 16 MiB")
    func hundredMebibytes() throws {
        let net = try Network(["alice", "bob"], environment: Self.fetchEverything)
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])
        let warmup = net.tmp.path + "/warmup.bin"
        _ = try AttachmentSendTests.writeFile(warmup, count: 100_000)
        let small = try Self.sent(alice, trip, warmup)
        try bob.waitUntil("bob fetches a small file first", timeoutMs: 60_000) { Self.state(bob, trip, small) == "available" }
        let pid = try require(bob.daemonPID, "bob's daemon")
        let before = try AttachmentSendTests.peakKB(pid)

        let path = net.tmp.path + "/film.mp4"
        try Self.writeFile(path, mebibytes: 100)
        let id = try Self.sent(alice, trip, path)
        let final = bob.group.storedAttachmentPath(conversationId: trip, messageId: id)
        let length = try AttachmentSendTests.reference(alice, id: id).length
        var sawFetching = false
        try bob.waitUntil("bob's daemon fetches 100 MiB", timeoutMs: 480_000) {
            let state = Self.state(bob, trip, id)
            if state == "fetching" {
                sawFetching = true
                // The rename comes just before `available` is recorded: under the final name, only the whole file.
                let size = (try? FileManager.default.attributesOfItem(atPath: final))?[.size] as? Int
                #expect(size == nil || size == length, "under the final name while fetching: \(size ?? -1) of \(length) bytes")
            }
            if state == "failed" { throw Device.Failure(message: "failed: \(String(describing: Self.attachment(bob, trip, id)))") }
            return state == "available"
        }
        #expect(sawFetching, "the state went through fetching")
        let grown = try AttachmentSendTests.peakKB(pid) - before
        #expect(grown < 16_384, "bob's daemon's peak RSS grew by \(grown) kB fetching 100 MiB")
        #expect(try AttachmentSendTests.reference(bob, id: id).length == length)
        #expect(FileManager.default.contentsEqual(atPath: final,
                                                   andPath: alice.group.storedAttachmentPath(conversationId: trip, messageId: id)))
        #expect(try require(try FileManager.default.attributesOfItem(atPath: final)[.size] as? Int) == length)

        let out = try AttachmentSaveTests.makeDirectory(net.tmp.path + "/out")
        let saved = try bob.cli(["save", id, out])
        #expect(saved.status == 0, "\(saved)")
        #expect(FileManager.default.contentsEqual(atPath: path, andPath: out + "/film.mp4"))
        #expect(alice.pushLog.contains("attachment served: message=\(id.prefix(8))"), "alice's worker served it")
    }

    // MARK: Kills

    @Test("alice's worker SIGKILLed before every 5th piece it sends (attachment.serve@5): bob asks again from the last whole piece each time and ends with the file whole, with no retry delay")
    func servingWorkerKilled() throws {
        let net = try Network(["alice", "bob"], environment: Self.fetchEverything)
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])
        alice.stopPushSocket()
        try alice.startPushSocket(environment: [CrashPoint.variable: "attachment.serve@5"])
        let path = net.tmp.path + "/scan.pdf"
        _ = try AttachmentSendTests.writeFile(path, count: 2_000_000)   // 31 pieces: 4 per connection
        let id = try Self.sent(alice, trip, path)
        try bob.waitUntil("bob's daemon fetches it across the kills", timeoutMs: 120_000) {
            if Self.state(bob, trip, id) == "failed" { throw Device.Failure(message: "failed: \(String(describing: Self.attachment(bob, trip, id)))") }
            return Self.state(bob, trip, id) == "available"
        }
        let reference = try AttachmentSendTests.reference(bob, id: id)
        let pieces = try require(AttachmentPieces.count(storedLength: reference.length))
        let resumes = bob.daemonLog.components(separatedBy: "ended its answer before piece").count - 1
        #expect(resumes == (pieces - 1) / 4, "one new request per 4 pieces: \(resumes) for \(pieces) pieces")
        for piece in stride(from: 4, to: pieces, by: 4) {
            #expect(bob.daemonLog.contains("ended its answer before piece \(piece); asking again from there"), "resumed at \(piece)")
        }
        #expect(!bob.daemonLog.contains("trying again in"), "no retry delay: each answer brought pieces")
        let out = try AttachmentSaveTests.makeDirectory(net.tmp.path + "/out")
        #expect(try bob.cli(["save", id, out]).status == 0)
        #expect(FileManager.default.contentsEqual(atPath: path, andPath: out + "/scan.pdf"))
    }

    @Test("bob's daemon SIGKILLed after 3 pieces of a fetch from alice (attachment.piece@3): 3 whole pieces in the partial file, nothing under the final name; the restart resumes at piece 3 and ends whole")
    func fetchingDaemonKilled() throws {
        let net = try Network(["alice", "bob"], environment: Self.fetchEverything)
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])
        bob.stopDaemon()
        try bob.startDaemon(environment: [CrashPoint.variable: "attachment.piece@3"])
        let path = net.tmp.path + "/notes.bin"
        _ = try AttachmentSendTests.writeFile(path, count: 600_000)
        let id = try Self.sent(alice, trip, path)
        #expect(try bob.diedAtCrashPoint("attachment.piece", timeoutMs: 60_000), "attachment.piece@3 was never reached")
        let partial = bob.group.attachmentsPath(conversationId: trip) + "/." + id + ".partial"
        let reference = try AttachmentSendTests.reference(bob, id: id)
        let held = try require(try FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int)
        #expect(held == AttachmentPieces.range(2, storedLength: reference.length).upperBound, "3 whole pieces: \(held)")
        #expect(!FileManager.default.fileExists(atPath: bob.group.storedAttachmentPath(conversationId: trip, messageId: id)))

        try bob.startDaemon()
        try bob.waitUntil("the restart resumes and ends", timeoutMs: 60_000) { Self.state(bob, trip, id) == "available" }
        #expect(alice.pushLog.contains("attachment served: message=\(id.prefix(8)) pieces 3..<"), "resumed at piece 3, not 0")
        #expect(!FileManager.default.fileExists(atPath: partial))
        let out = try AttachmentSaveTests.makeDirectory(net.tmp.path + "/out")
        #expect(try bob.cli(["save", id, out]).status == 0)
        #expect(FileManager.default.contentsEqual(atPath: path, andPath: out + "/notes.bin"))
    }

    // MARK: Hostile requests

    /// One request line (or any bytes) to a device's real push socket; the whole answer.
    static func ask(_ device: Device, _ bytes: [UInt8]) throws -> [UInt8] {
        let fd = UnixSocket.connect(device.runtime.pushSocketPath)
        guard fd >= 0 else { throw Device.Failure(message: "connect: errno \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard UnixSocket.sendAll(fd, bytes) else { throw Device.Failure(message: "send: errno \(errno)") }
        shutdown(fd, Int32(SHUT_WR))
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            answer += buffer[..<n]
        }
        return answer
    }

    @Test("the worker serves a stored file only to who names its message and attachment id: garbage, a wrong id, a text, a piece past the end get refused with their code and change nothing; a good request gets S from its piece")
    func hostileRequests() throws {
        let net = try Network(["alice"], environment: Self.noAutomaticFetch)
        let alice = net["alice"]
        let (_, trip) = try AttachmentSaveTests.aliceAlone(net)
        let path = net.tmp.path + "/photo.jpg"
        _ = try AttachmentSendTests.writeFile(path, count: 300_000)
        let id = try Self.sent(alice, trip, path)
        let text = try require(try alice.json(["send", trip, "hello"])["messageId"] as? String, "text id")
        let reference = try AttachmentSendTests.reference(alice, id: id)
        let attachmentId = Hex.encode(reference.id)
        let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: alice.group.storedAttachmentPath(conversationId: trip, messageId: id))))
        let pieces = try require(AttachmentPieces.count(storedLength: reference.length))
        let before = try alice.query("SELECT (SELECT count(*) FROM message), (SELECT max(seq) FROM change_log)")[0]

        func request(_ message: String, _ attachment: String, _ piece: Int) -> [UInt8] {
            AttachmentFetchExchange.Request(messageId: message, attachmentId: attachment, firstPiece: piece).line
        }
        let refusals: [(String, [UInt8], AttachmentFetchExchange.Refusal)] = [
            ("no fields", Array("#sotto-attachment-fetch v1\n".utf8), .badRequest),
            ("another version", Array("#sotto-attachment-fetch v2 \(id) \(attachmentId) 0\n".utf8), .badRequest),
            ("uppercase hex", Array("#sotto-attachment-fetch v1 \(id.uppercased()) \(attachmentId) 0\n".utf8), .badRequest),
            ("two spaces", Array("#sotto-attachment-fetch v1 \(id)  \(attachmentId) 0\n".utf8), .badRequest),
            ("a leading zero", Array("#sotto-attachment-fetch v1 \(id) \(attachmentId) 01\n".utf8), .badRequest),
            ("a negative piece", Array("#sotto-attachment-fetch v1 \(id) \(attachmentId) -1\n".utf8), .badRequest),
            ("control bytes", Array("#sotto-attachment-fetch v1 \(id) \(attachmentId) 0\u{1B}[2J\n".utf8), .badRequest),
            ("a piece past the end", request(id, attachmentId, pieces), .badRequest),
            ("an unknown message", request(Hex.encode(SecureRandom.bytes(16)), attachmentId, 0), .unknownAttachment),
            ("another attachment id", request(id, Hex.encode(SecureRandom.bytes(16)), 0), .unknownAttachment),
            ("a text message", request(text, attachmentId, 0), .unknownAttachment),
        ]
        for (what, bytes, refusal) in refusals {
            #expect(try Self.ask(alice, bytes) == refusal.line, "\(what)")
        }
        // The vectors' request lines an endpoint refuses, through the real worker.
        for vector in try AttachmentDirectVectors.load().requests where vector.parsed == nil {
            #expect(try Self.ask(alice, vector.line + [0x0a]) == AttachmentFetchExchange.Refusal.badRequest.line, "\(vector.name)")
        }
        // A request cut before its LF (the sender half-closed) is still one.
        #expect(try Self.ask(alice, Array(request(id, attachmentId, pieces - 1).dropLast())).starts(with: AttachmentFetchExchange.okLine))
        let after = try alice.query("SELECT (SELECT count(*) FROM message), (SELECT max(seq) FROM change_log)")[0]
        #expect(after == before, "nothing written")

        // A good request: S from piece 2 on, whole pieces, exactly.
        let answer = try Self.ask(alice, request(id, attachmentId, 2))
        let head = AttachmentFetchExchange.okLine + [0x0a]
        #expect(Array(answer.prefix(head.count)) == head)
        #expect(Array(answer.dropFirst(head.count)) == Array(stored[AttachmentPieces.range(2, storedLength: reference.length).lowerBound...]))

        // Once the file is gone from alice's device, it is unknown.
        try FileManager.default.removeItem(atPath: alice.group.storedAttachmentPath(conversationId: trip, messageId: id))
        #expect(try Self.ask(alice, request(id, attachmentId, 0)) == AttachmentFetchExchange.Refusal.unknownAttachment.line)
    }
}
