import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Issue #35, second layer (docs/adr/0074): `sotto send ID --file PATH` between real daemons
/// with their real workers on real sockets. The sender's daemon reads the file once, stores
/// it encrypted and sends its reference; the member shows it `waiting`, the sender
/// `available`; explode and leave leave no stored file; a refusal stores nothing; a SIGKILL
/// between storing the file and queuing the message leaves both or neither.
@Suite("Messaging: sending a file", .serialized, .timeLimit(.minutes(4)))
struct AttachmentSendTests {
    // MARK: Helpers

    /// `count` bytes that are not all alike, in a file at `path`.
    static func writeFile(_ path: String, count: Int) throws -> [UInt8] {
        var generator = SeededGenerator(state: UInt64(count) | 1)
        let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return bytes
    }

    /// Every file under the device's `attachments/` directory, as paths relative to it.
    static func storedFiles(_ device: Device) -> [String] {
        let root = device.group.attachmentsPath
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        return walker.compactMap { $0 as? String }.filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: root + "/" + name, isDirectory: &isDirectory) && !isDirectory.boolValue
        }.sorted()
    }

    /// The attachment messages the device stored in `conversation`.
    static func attachmentMessages(_ device: Device, _ conversation: String) throws -> Int64 {
        try device.query("SELECT count(*) FROM message WHERE conversationId = ? AND contentType = ?",
                         [.text(conversation), .text(ContentType.attachment)])[0].int64(0)
    }

    /// The message `id` as `sotto read --json` shows it.
    static func read(_ device: Device, _ conversation: String, id: String) -> [String: Any]? {
        device.messages(conversation).first { $0["id"] as? String == id }
    }

    /// The reference in the device's stored (sealed) content of message `id`.
    static func reference(_ device: Device, id: String) throws -> AttachmentReference {
        let row = try require(try device.storedMessage(id: id), "stored message \(id)")
        #expect(row.contentType == ContentType.attachment)
        return try AttachmentReference.decode(row.content)
    }

    /// The stored file opened with its reference: its plaintext, after every check of §5.
    static func decrypt(_ storedPath: String, _ reference: AttachmentReference) throws -> [UInt8] {
        let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: storedPath)))
        var decryptor = AttachmentDecryptor(reference)
        var plain: [UInt8] = []
        try decryptor.consume(stored) { bytes in plain += bytes }
        try decryptor.finish()
        return plain
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var hasher = SHA256Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }

    // MARK: Sending

    @Test("send --file: stored once, encrypted, on the sender only; the member reads it waiting, the sender available; read shows 📎; leave and explode leave no file")
    func sendToMember() throws {
        // The members' files stay `waiting`: what this test shows is the reference without the file
        // (fetching it from alice's endpoint is AttachmentDirectFetchTests').
        let net = try Network(["alice", "bob"], environment: AttachmentDirectFetchTests.noAutomaticFetch)
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])
        let path = net.tmp.path + "/view from the train.jpg"
        let original = try Self.writeFile(path, count: 200_000)

        let sent = try alice.json(["send", trip, "--file", path, "--text", "the view"])
        let id = try require(sent["messageId"] as? String, "messageId")
        #expect(sent["size"] as? Int == 200_000 && sent["recipients"] as? Int == 1, "\(sent)")
        #expect(sent["storedLength"] as? Int == AttachmentLayout.storedLength(200_000))

        // The stored file: exactly one, under the message's id, and it is the file encrypted.
        let storedPath = alice.group.attachmentsPath(conversationId: trip) + "/" + id
        #expect(Self.storedFiles(alice) == ["\(trip)/\(id)"])
        let reference = try Self.reference(alice, id: id)
        let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: storedPath)))
        #expect(stored.count == reference.length && reference.size == 200_000)
        #expect(Self.sha256(stored) == reference.sha256)
        #expect(try Self.decrypt(storedPath, reference) == original)
        #expect(reference.name == "view from the train.jpg" && reference.mediaType == "image/jpeg" && reference.caption == "the view")
        // One push per member, inline: the reference fits it (docs/protocol/attachments.md §7).
        let pushes = try alice.query("SELECT payload FROM outbox WHERE messageId = ?", [.text(id)]).map { try PushPayload.decode(try $0.blob(0)) }
        #expect(pushes.count == 1 && pushes.allSatisfy { $0.body == nil })
        // Not a byte of the file in clear anywhere in the group directory.
        #expect(try !alice.groupFilesContain(Array(original[1_000..<1_064])))

        // The member has the reference (the same one, signed) and no file: waiting.
        try bob.waitUntil("bob has the attachment") { Self.read(bob, trip, id: id) != nil }
        let onBob = try require(Self.read(bob, trip, id: id)?["attachment"] as? [String: Any], "bob's attachment object")
        #expect(onBob["name"] as? String == "view from the train.jpg" && onBob["size"] as? Int == 200_000, "\(onBob)")
        #expect(onBob["mediaType"] as? String == "image/jpeg" && onBob["caption"] as? String == "the view", "\(onBob)")
        #expect(onBob["state"] as? String == "waiting", "\(onBob)")
        #expect(try Self.reference(bob, id: id) == reference)
        #expect(Self.storedFiles(bob).isEmpty)
        let onAlice = try require(Self.read(alice, trip, id: id)?["attachment"] as? [String: Any], "alice's attachment object")
        #expect(onAlice["state"] as? String == "available", "\(onAlice)")
        try alice.waitUntil("alice sees it delivered") { Self.read(alice, trip, id: id)?["deliveryStatus"] as? String == "delivered" }

        // `sotto read`: the one line, then the caption.
        let bobRead = try bob.cli(["read", trip]).stdout
        #expect(bobRead.contains(": 📎 view from the train.jpg (195.3 KiB, waiting) (received)  [\(id.prefix(8))]\n  ┆ the view")
                || bobRead.contains(": 📎 view from the train.jpg (195.3 KiB, waiting)\n  ┆ the view"), "\(bobRead)")
        #expect(try alice.cli(["read", trip]).stdout.contains("me: 📎 view from the train.jpg (195.3 KiB, available)"))

        // A member's own file goes when the member leaves.
        let notes = net.tmp.path + "/notes.txt"
        _ = try Self.writeFile(notes, count: 5_000)
        let bobs = try require(try bob.json(["send", trip, "--file", notes])["messageId"] as? String, "bob's messageId")
        #expect(Self.storedFiles(bob) == ["\(trip)/\(bobs)"])
        try alice.waitUntil("alice has bob's file") {
            (Self.read(alice, trip, id: bobs)?["attachment"] as? [String: Any])?["state"] as? String == "waiting"
        }
        _ = try bob.json(["leave", trip])
        try bob.waitUntil("bob's copy is deleted") { try isGone(bob, trip) }
        #expect(Self.storedFiles(bob).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: bob.group.attachmentsPath(conversationId: trip)))

        // The creator explodes it: no stored file is left.
        _ = try alice.json(["explode", trip])
        try alice.waitUntil("alice's copy is deleted") { try isGone(alice, trip) }
        #expect(Self.storedFiles(alice).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: alice.group.attachmentsPath(conversationId: trip)))
    }

    /// The process's peak resident set (VmHWM), in kB.
    static func peakKB(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }, "VmHWM")
        return try require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]), "VmHWM's number")
    }

    @Test("the daemon's peak RSS does not grow with the file: 32 MiB sent, the peak grows by less than 8 MiB")
    func daemonMemoryStaysFlat() throws {
        let net = try Network(["alice"])
        let alice = net["alice"]
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String, "conversationId")
        // A first, small file: the store's thread and buffers exist before the peak is read.
        let small = net.tmp.path + "/small.bin"
        _ = try Self.writeFile(small, count: 65_536)
        #expect(try alice.cli(["send", trip, "--file", small]).status == 0)
        let pid = try require(alice.daemonPID, "alice's daemon")
        let before = try Self.peakKB(pid)

        let big = net.tmp.path + "/big.bin"
        let block = try Self.writeFile(big, count: 1 << 20)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: big))
        try handle.seekToEnd()
        for index in 1..<32 { try handle.write(contentsOf: block.map { $0 &+ UInt8(index) }) }
        try handle.close()
        let sent = try alice.json(["send", trip, "--file", big])
        #expect(sent["size"] as? Int == 32 << 20)
        let grown = try Self.peakKB(pid) - before
        #expect(grown < 8_192, "the daemon's peak grew by \(grown) kB for a 32 MiB file")
    }

    // MARK: Refusals

    @Test("over 100 MiB (a sparse file), missing, a directory, a file that gives more than its size, a name with controls: a clear error, non-zero exit, nothing stored or sent")
    func refusals() throws {
        let net = try Network(["alice"])
        let alice = net["alice"]
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String, "conversationId")
        let messagesBefore = try alice.query("SELECT count(*) FROM message")[0].int64(0)

        let huge = net.tmp.path + "/huge.bin"
        let fd = open(huge, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        #expect(fd >= 0 && ftruncate(fd, off_t(AttachmentLayout.maxSize + 1)) == 0)
        close(fd)
        let controlled = net.tmp.path + "/evil\u{1B}[2J.txt"
        _ = try Self.writeFile(controlled, count: 10)
        let small = net.tmp.path + "/small.txt"
        _ = try Self.writeFile(small, count: 10)

        let cases: [(arguments: [String], says: String)] = [
            (["send", trip, "--file", huge], "104857601 bytes; a file may have at most 104857600 bytes (100 MiB)"),
            (["send", trip, "--file", net.tmp.path + "/missing.jpg"], "No such file or directory"),
            (["send", trip, "--file", net.tmp.path], "is a directory, not a file"),
            // /proc files say they are 0 bytes long and give more: the size changed while read.
            (["send", trip, "--file", "/proc/version"], "changed while it was read"),
            (["send", trip, "--file", controlled], "may not contain control characters (it is the path's last part; give one with --name)"),
            (["send", trip, "--file", small, "--name", "a\u{1B}]0;pwned\u{07}"], "the name may not contain control characters"),
        ]
        for (arguments, says) in cases {
            let result = try alice.cli(arguments)
            #expect(result.status != 0, "\(arguments): \(result)")
            #expect(result.stderr.contains(says), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "the error is inert: \(result.stderr)")
        }
        #expect(Self.storedFiles(alice).isEmpty)
        #expect(try Self.attachmentMessages(alice, trip) == 0)
        #expect(try alice.query("SELECT count(*) FROM message")[0].int64(0) == messagesBefore)
        #expect(try alice.query("SELECT count(*) FROM outbox")[0].int64(0) == 0)
        // A file of exactly the limit's size would be taken: the limit is the size, not less.
        #expect(AttachmentLayout.maxSize == 104_857_600)
    }

    // MARK: Crashes

    @Test("SIGKILL between storing the file and queuing its message: after the restart neither; after the commit: both, and the member gets it")
    func crashBetweenStoringAndQueuing() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])
        let path = net.tmp.path + "/report.pdf"
        _ = try Self.writeFile(path, count: 70_000)

        // Killed with the file stored under its name and no message: the restart removes the file.
        alice.stopDaemon()
        try alice.startDaemon(environment: [CrashPoint.variable: "attachment.stored"])
        let killed = try alice.cli(["send", trip, "--file", path])
        #expect(killed.status != 0)
        #expect(try alice.diedAtCrashPoint("attachment.stored", timeoutMs: 30_000), "attachment.stored was never reached")
        #expect(Self.storedFiles(alice).count == 1, "the file was stored before the crash: \(Self.storedFiles(alice))")
        #expect(try Self.attachmentMessages(alice, trip) == 0)
        try alice.startDaemon()
        #expect(Self.storedFiles(alice).isEmpty, "the restart swept the file with no message")
        #expect(try Self.attachmentMessages(alice, trip) == 0)
        #expect(try alice.query("SELECT count(*) FROM outbox WHERE state = 'pending'")[0].int64(0) == 0)

        // Killed just after the commit: the file and the message both stay, and go out.
        alice.stopDaemon()
        try alice.startDaemon(environment: [CrashPoint.variable: "send.committed"])
        _ = try alice.cli(["send", trip, "--file", path])
        #expect(try alice.diedAtCrashPoint("send.committed", timeoutMs: 30_000), "send.committed was never reached")
        let id = try require(try alice.query("SELECT id FROM message WHERE contentType = ?", [.text(ContentType.attachment)])
            .first?.string(0), "the committed attachment message")
        try alice.startDaemon()
        #expect(Self.storedFiles(alice) == ["\(trip)/\(id)"])
        let reference = try Self.reference(alice, id: id)
        #expect(try Self.decrypt(alice.group.attachmentsPath(conversationId: trip) + "/" + id, reference).count == 70_000)
        try bob.waitUntil("bob gets the message sent before the crash") { Self.read(bob, trip, id: id) != nil }
    }
}
