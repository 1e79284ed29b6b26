import ControlProtocol
import Foundation
import SottoClient
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// `sotto save MESSAGE [DEST]` (issue #35, docs/adr/0077) with a real daemon, its real
/// control socket and the real CLI: the daemon decrypts and verifies the stored file and
/// streams it; the CLI writes a hidden temporary file beside DEST and names it only when the
/// whole file verified, never over an existing file, under the sender's name made safe.
@Suite("Messaging: saving a file", .serialized, .timeLimit(.minutes(4)))
struct AttachmentSaveTests {
    // MARK: Helpers

    /// A conversation of alice alone.
    static func aliceAlone(_ net: Network) throws -> (Device, String) {
        let alice = net["alice"]
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String, "conversationId")
        return (alice, trip)
    }

    /// Sends a file of `count` bytes (named `name` unless nil) and returns its message id and bytes.
    static func send(_ device: Device, _ conversation: String, _ path: String, count: Int,
                     name: String? = nil) throws -> (id: String, bytes: [UInt8]) {
        let bytes = try AttachmentSendTests.writeFile(path, count: count)
        let sent = try device.json(["send", conversation, "--file", path] + (name.map { ["--name", $0] } ?? []))
        return (try require(sent["messageId"] as? String, "messageId"), bytes)
    }

    /// Every name in `directory`, hidden ones included.
    static func names(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    static func contents(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }

    static func makeDirectory(_ path: String) throws -> String {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    // MARK: Saving

    @Test("save: the sender's own file byte for byte (1,000, 0 and 300,000 bytes), into a directory under its name, again as NAME (1).EXT, to a new path; an existing path is refused and untouched")
    func savesOwnFiles() throws {
        let net = try Network(["alice"])
        let (alice, trip) = try Self.aliceAlone(net)
        let out = try Self.makeDirectory(net.tmp.path + "/out")
        let notes = try Self.send(alice, trip, net.tmp.path + "/notes.txt", count: 1_000)
        let empty = try Self.send(alice, trip, net.tmp.path + "/empty.bin", count: 0)
        let big = try Self.send(alice, trip, net.tmp.path + "/big.bin", count: 300_000)

        for (file, name) in [(notes, "notes.txt"), (empty, "empty.bin"), (big, "big.bin")] {
            let saved = try alice.cli(["save", file.id, out])
            #expect(saved.status == 0, "\(name): \(saved)")
            #expect(saved.stdout.hasPrefix("saved \(out)/\(name) ("), "\(saved.stdout)")
            #expect(Self.contents(out + "/" + name) == file.bytes, "\(name) is the file byte for byte")
        }
        // A prefix of the id is enough; a second save never overwrites: the next free number.
        let again = try alice.json(["save", String(notes.id.prefix(10)), out])
        #expect(again["path"] as? String == out + "/notes (1).txt" && again["size"] as? Int == 1_000, "\(again)")
        let third = try alice.json(["save", notes.id, out + "/"])
        #expect(third["path"] as? String == out + "/notes (2).txt", "\(third)")
        #expect(Self.contents(out + "/notes (2).txt") == notes.bytes)
        // DEST a new path in an existing directory: exactly that name.
        let renamed = try alice.cli(["save", big.id, out + "/train.bin"])
        #expect(renamed.status == 0 && renamed.stdout.contains("saved \(out)/train.bin"), "\(renamed)")
        #expect(Self.contents(out + "/train.bin") == big.bytes)
        // DEST an existing file: refused, untouched; DEST in a missing directory: refused.
        let existing = try alice.cli(["save", big.id, out + "/notes.txt"])
        #expect(existing.status != 0 && existing.stderr.contains("exists and is not a directory: sotto save never overwrites"),
                "\(existing)")
        #expect(Self.contents(out + "/notes.txt") == notes.bytes)
        let nowhere = try alice.cli(["save", big.id, net.tmp.path + "/missing/dir/x.bin"])
        #expect(nowhere.status != 0 && nowhere.stderr.contains("is not a directory"), "\(nowhere)")
        // Nothing else, and no temporary file, was left anywhere.
        #expect(Self.names(out) == ["big.bin", "empty.bin", "notes (1).txt", "notes (2).txt", "notes.txt", "train.bin"])
        #expect(!FileManager.default.fileExists(atPath: net.tmp.path + "/missing"))
    }

    @Test("a progress bar on stderr only when it is a terminal: none through a pipe, one under script(1)'s pty, cleared before the path is printed")
    func progressOnATerminal() throws {
        let net = try Network(["alice"])
        let (alice, trip) = try Self.aliceAlone(net)
        let out = try Self.makeDirectory(net.tmp.path + "/out")
        let file = try Self.send(alice, trip, net.tmp.path + "/five.bin", count: 300_000)

        let piped = try alice.cli(["save", file.id, out + "/piped.bin"])
        #expect(piped.status == 0 && piped.stderr.isEmpty, "no bar when stderr is not a terminal: \(piped)")

        let command = "'\(try builtExecutable("sotto"))' save \(file.id) '\(out)/tty.bin'"
        let tty = try ChildProcess.run("/usr/bin/script", ["-q", "-e", "-c", command, "/dev/null"], environment: alice.environment)
        #expect(tty.status == 0, "\(tty)")
        #expect(tty.stdout.contains("█") && tty.stdout.contains("100% 293.0 KiB of 293.0 KiB"), "\(tty.stdout)")
        #expect(tty.stdout.contains("\r\u{1B}[Ksaved \(out)/tty.bin (293.0 KiB)"), "the bar is cleared first: \(tty.stdout)")
        #expect(Self.contents(out + "/tty.bin") == file.bytes)
    }

    @Test("hostile names from the reference are saved under safe(name) inside DEST, never outside: ../../etc/passwd, .bashrc, .., 1,000 bytes, an RTL override")
    func hostileNames() throws {
        let net = try Network(["alice"])
        let (alice, trip) = try Self.aliceAlone(net)
        let out = try Self.makeDirectory(net.tmp.path + "/deep/er/out")
        let source = net.tmp.path + "/source.bin"
        let hostile = ["../../etc/passwd", ".bashrc", "..", String(repeating: "x", count: 996) + ".jpeg",
                       String(repeating: "y", count: 1_000), "evil\u{202E}gpj.exe", "/absolute/../../x"]
        var expected: [String] = []
        for (index, name) in hostile.enumerated() {
            let file = try Self.send(alice, trip, source, count: 100 + index, name: name)
            let saved = try alice.json(["save", file.id, out])
            let path = try require(saved["path"] as? String, "path")
            let safe = AttachmentFileName.safe(name)
            #expect(path == out + "/" + safe, "\(name) → \(path)")
            #expect(Self.contents(path) == file.bytes)
            expected.append(safe)
        }
        #expect(Self.names(out) == expected.sorted())
        #expect(Self.names(net.tmp.path + "/deep/er") == ["out"] && Self.names(net.tmp.path + "/deep") == ["er"])
        #expect(!FileManager.default.fileExists(atPath: net.tmp.path + "/etc"))
        #expect(expected.allSatisfy { !$0.hasPrefix(".") && !$0.contains("/") && $0.utf8.count <= 255 })
    }

    // MARK: Refusals

    @Test("a stored file with one byte flipped in chunk 3: non-zero exit, the chunk named, nothing left in DEST, no temporary file")
    func damagedChunk() throws {
        let net = try Network(["alice"])
        let (alice, trip) = try Self.aliceAlone(net)
        let out = try Self.makeDirectory(net.tmp.path + "/out")
        let file = try Self.send(alice, trip, net.tmp.path + "/five-chunks.bin", count: 300_000)
        let stored = alice.group.attachmentsPath(conversationId: trip) + "/" + file.id
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: stored))
        let offset = UInt64(AttachmentLayout.header.count + 3 * (AttachmentLayout.chunkSize + AttachmentLayout.tagSize) + 100)
        try handle.seek(toOffset: offset)
        let byte = try require(try handle.read(upToCount: 1)?.first, "a byte of chunk 3")
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: [byte ^ 0x01])
        try handle.close()

        let saved = try alice.cli(["save", file.id, out])
        #expect(saved.status != 0, "\(saved)")
        #expect(saved.stderr.contains("is damaged (attachment_bad_chunk (chunk 3)") && saved.stderr.contains("nothing was saved"),
                "\(saved.stderr)")
        #expect(Self.names(out).isEmpty, "nothing, not even a temporary file: \(Self.names(out))")
        #expect(try alice.cli(["status"]).status == 0)
    }

    @Test("a stored file whose every chunk opens but whose SHA-256 is not the reference's (another file under the same key): every byte streamed, then refused, nothing in DEST")
    func digestMismatch() throws {
        let net = try Network(["alice"])
        let (alice, trip) = try Self.aliceAlone(net)
        let out = try Self.makeDirectory(net.tmp.path + "/out")
        let file = try Self.send(alice, trip, net.tmp.path + "/report.pdf", count: 200_000)
        let reference = try AttachmentSendTests.reference(alice, id: file.id)
        // Another file of the same size sealed with the same id and key: each chunk authenticates.
        let other = net.tmp.path + "/other.bin"
        try Data(file.bytes.map { $0 ^ 0x5a }).write(to: URL(fileURLWithPath: other))
        let stored = alice.group.attachmentsPath(conversationId: trip) + "/" + file.id
        let source = open(other, O_RDONLY), sink = open(stored, O_WRONLY | O_TRUNC)
        #expect(source >= 0 && sink >= 0)
        _ = try AttachmentFile.encrypt(from: source, size: 200_000, to: sink, id: reference.id, key: reference.key)
        close(source)
        close(sink)

        var streamed = 0
        let client = try ControlSocketClient(path: alice.runtime.controlSocketPath)
        #expect(throws: ControlClient.Failure.self) {
            _ = try client.connection.saveAttachment(SaveAttachmentParams(message: file.id)) { _, _, bytes in streamed += bytes.count }
        }
        #expect(streamed == 200_000, "every chunk opened and was streamed before the digest was known")

        let saved = try alice.cli(["save", file.id, out])
        #expect(saved.status != 0 && saved.stderr.contains("attachment_digest_mismatch") && saved.stderr.contains("nothing was saved"),
                "\(saved)")
        #expect(Self.names(out).isEmpty, "\(Self.names(out))")
    }

    @Test("garbage params, an unknown id, a text message, a recipient's file its sender no longer holds: a clear error, nothing written")
    func refusals() throws {
        let net = try Network(["alice", "bob"], environment: AttachmentDirectFetchTests.noAutomaticFetch)
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])
        let out = try Self.makeDirectory(net.tmp.path + "/out")
        let file = try Self.send(alice, trip, net.tmp.path + "/photo.jpg", count: 5_000)
        let text = try require(try alice.json(["send", trip, "hello"])["messageId"] as? String, "text id")

        let client = try ControlSocketClient(path: alice.runtime.controlSocketPath)
        let cases: [([String: Any], Int, String)] = [
            ([:], -32602, "message"),
            (["message": 5], -32602, "message"),
            (["message": ""], -32602, "message"),
            (["message": "not hex!"], -32602, "is not a message id"),
            (["message": "ffffffffffffffff"], -32001, "no message matches 'ffffffffffffffff'"),
            (["message": text], -32602, "is not a file"),
        ]
        for (params, code, says) in cases {
            let error = try require(try client.call("saveAttachment", params)["error"] as? [String: Any], "\(params): an error")
            #expect(error["code"] as? Int == code, "\(params): \(error)")
            #expect((error["message"] as? String)?.contains(says) == true, "\(params): \(error)")
        }
        // The connection still serves: a good request on it streams and answers.
        var received = 0
        let saved = try client.connection.callStreaming(SaveAttachmentParams(message: file.id), notification: .attachmentData) {
            received += try #require(try AttachmentData(json: $0).bytes).count
        }
        #expect(saved.size == 5_000 && received == 5_000 && saved.name == "photo.jpg" && saved.mediaType == "image/jpeg")

        // The CLI says it and writes nothing.
        let unknown = try alice.cli(["save", "ffffffff", out])
        #expect(unknown.status == 65 && unknown.stderr.contains("no message matches 'ffffffff'"), "\(unknown)")
        let notAFile = try alice.cli(["save", text, out])
        #expect(notAFile.status == 65 && notAFile.stderr.contains("is not a file"), "\(notAFile)")

        // A recipient's copy cannot arrive: its sender's device no longer holds it. Refused, said why.
        try bob.waitUntil("bob has the reference") { AttachmentSendTests.read(bob, trip, id: file.id) != nil }
        try FileManager.default.removeItem(atPath: alice.group.storedAttachmentPath(conversationId: trip, messageId: file.id))
        let gone = try bob.cli(["save", file.id, out])
        #expect(gone.status != 0 && gone.stderr.contains("the sender's device does not serve the file (unknown_attachment)"), "\(gone)")
        #expect(Self.names(out).isEmpty, "\(Self.names(out))")
    }

    // MARK: The daemon

    @Test("the daemon's peak RSS does not grow with the file (32 MiB saved: < 16 MiB), and a client that goes mid-stream leaves it healthy with no open fd on the file")
    func daemonStaysHealthy() throws {
        let net = try Network(["alice"])
        let (alice, trip) = try Self.aliceAlone(net)
        let out = try Self.makeDirectory(net.tmp.path + "/out")
        let small = try Self.send(alice, trip, net.tmp.path + "/small.bin", count: 200_000)
        #expect(try alice.cli(["save", small.id, out]).status == 0)  // the reader's threads and buffers exist
        let pid = try require(alice.daemonPID, "alice's daemon")

        let bigPath = net.tmp.path + "/big.bin"
        let block = try AttachmentSendTests.writeFile(bigPath, count: 1 << 20)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: bigPath))
        try handle.seekToEnd()
        for index in 1..<32 { try handle.write(contentsOf: block.map { $0 &+ UInt8(index) }) }
        try handle.close()
        let big = try require(try alice.json(["send", trip, "--file", bigPath])["messageId"] as? String, "messageId")
        let before = try AttachmentSendTests.peakKB(pid)
        let saved = try alice.cli(["save", big, out])
        #expect(saved.status == 0, "\(saved)")
        let grown = try AttachmentSendTests.peakKB(pid) - before
        #expect(grown < 16_384, "the daemon's peak grew by \(grown) kB saving a 32 MiB file")
        #expect(FileManager.default.contentsEqual(atPath: bigPath, andPath: out + "/big.bin"))

        // A client that reads two pieces and goes: the daemon closes the file and serves on.
        let storedPath = alice.group.attachmentsPath(conversationId: trip) + "/" + big
        let client = try ControlSocketClient(path: alice.runtime.controlSocketPath)
        try client.sendRaw(JSONRPC.requestLine(id: 1, method: "saveAttachment", params: ["message": .string(big)]))
        for _ in 0..<2 {
            guard case .notification("attachmentData", _) = try client.connection.readMessage() else {
                Issue.record("not attachmentData")
                return
            }
        }
        #expect(Self.openFiles(pid).contains(storedPath), "the daemon has the file open while it streams")
        client.connection.shutdown()
        try alice.waitUntil("the daemon closes the stored file", timeoutMs: 30_000) { !Self.openFiles(pid).contains(storedPath) }
        #expect(try alice.cli(["status"]).status == 0)
        #expect(try AttachmentSendTests.peakKB(pid) - before < 16_384)
        // And it saves again.
        #expect(try alice.cli(["save", small.id, out + "/again.bin"]).status == 0)
        #expect(Self.contents(out + "/again.bin") == small.bytes)
    }

    @Test("sotto save interrupted (SIGTERM) while it waits for the daemon: its temporary file is removed, nothing in DEST; the daemon serves on")
    func interrupted() throws {
        let net = try Network(["alice"])
        let (alice, trip) = try Self.aliceAlone(net)
        let out = try Self.makeDirectory(net.tmp.path + "/out")
        let file = try Self.send(alice, trip, net.tmp.path + "/photo.jpg", count: 300_000)
        let (save, pid) = try Self.saveWaitingOnAStoppedDaemon(net, alice, file.id, into: out)
        defer { kill(pid, SIGCONT) }
        save.terminate()
        save.waitUntilExit()
        #expect(save.terminationReason == .uncaughtSignal && save.terminationStatus == SIGTERM)
        #expect(Self.names(out).isEmpty, "\(Self.names(out))")

        kill(pid, SIGCONT)
        #expect(try alice.cli(["status"]).status == 0)
        #expect(try alice.cli(["save", file.id, out]).status == 0)
        #expect(Self.names(out) == ["photo.jpg"])
    }

    @Test("sotto save SIGKILLed while it waits: its temporary file stays (nothing could remove it), and the next save into that directory removes it; a live save's file and other hidden files are left alone")
    func killedSaveLeftoverIsRemoved() throws {
        let net = try Network(["alice"])
        let (alice, trip) = try Self.aliceAlone(net)
        let out = try Self.makeDirectory(net.tmp.path + "/out")
        let file = try Self.send(alice, trip, net.tmp.path + "/photo.jpg", count: 300_000)
        let (save, pid) = try Self.saveWaitingOnAStoppedDaemon(net, alice, file.id, into: out)
        defer { kill(pid, SIGCONT) }
        kill(save.processIdentifier, SIGKILL)
        save.waitUntilExit()
        let leftover = ".sotto-save-\(save.processIdentifier)-0.partial"
        #expect(Self.names(out) == [leftover], "\(Self.names(out))")
        // A live save's temporary file (this test process's pid) and a hidden file of the user's own.
        let live = ".sotto-save-\(getpid())-0.partial"
        #expect(FileManager.default.createFile(atPath: out + "/" + live, contents: Data([1])))
        #expect(FileManager.default.createFile(atPath: out + "/.sotto-save-notes", contents: Data([2])))

        kill(pid, SIGCONT)
        #expect(try alice.cli(["save", file.id, out]).status == 0)
        #expect(Self.names(out) == [live, ".sotto-save-notes", "photo.jpg"].sorted(), "\(Self.names(out))")
    }

    /// `sotto save MESSAGE OUT` against alice's daemon stopped with SIGSTOP: the command
    /// connects (the socket's backlog), makes its temporary file and waits in read(2). The
    /// caller sends the daemon SIGCONT (a `defer`, so a failed step never leaves it stopped).
    static func saveWaitingOnAStoppedDaemon(_ net: Network, _ alice: Device, _ message: String,
                                            into out: String) throws -> (save: SpawnedProcess, daemon: Int32) {
        let pid = try require(alice.daemonPID, "alice's daemon")
        kill(pid, SIGSTOP)
        do {
            let save = try SpawnedProcess.launch(try builtExecutable("sotto"), ["save", message, out], environment: alice.environment,
                                                 log: net.tmp.path + "/save.log")
            try alice.waitUntil("the command has its temporary file and waits for the daemon") {
                Self.names(out).contains { $0.hasPrefix(".sotto-save-") } && Self.isReading(save.processIdentifier)
            }
            return (save, pid)
        } catch {
            kill(pid, SIGCONT)
            throw error
        }
    }

    /// Whether `pid`'s main thread is blocked in read(2).
    static func isReading(_ pid: Int32) -> Bool {
        #if arch(x86_64)
        let read = "0"
        #else
        let read = "63"
        #endif
        let text = (try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8)) ?? ""
        return text.split(separator: " ").first.map(String.init) == read
    }

    /// What the process's descriptors point at.
    static func openFiles(_ pid: Int32) -> [String] {
        let directory = "/proc/\(pid)/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + $0)
        }
    }
}
