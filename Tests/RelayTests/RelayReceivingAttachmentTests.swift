import Foundation
import RelayTransport
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// A recipient's daemon fetching an attachment's stored file from its relay in the background
/// (docs/adr/0078): each piece checked, the file whole under its name or not there, resumed
/// from the last whole piece after a kill. All real: daemons, sotto-relayd, workers,
/// nats-server.
@Suite("Relay receiving: attachments", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayReceivingAttachmentTests {
    static func attachment(_ peers: RelayPeers, _ name: String, _ conversation: String, id: String) -> [String: Any]? {
        peers.message(name, conversation, id: id)?["attachment"] as? [String: Any]
    }

    static func state(_ peers: RelayPeers, _ name: String, _ conversation: String, id: String) -> String? {
        attachment(peers, name, conversation, id: id)?["state"] as? String
    }

    static func stored(_ device: Device, _ conversation: String, _ id: String) -> [UInt8]? {
        FileManager.default.contents(atPath: device.group.attachmentsPath(conversationId: conversation) + "/" + id).map { [UInt8]($0) }
    }

    static func files(_ device: Device, _ conversation: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: device.group.attachmentsPath(conversationId: conversation))) ?? []).sorted()
    }

    /// Alice sends a file of `count` random bytes; returns the message id and alice's stored file.
    static func send(_ peers: RelayPeers, _ conversation: String, count: Int, name: String = "scan.pdf") throws -> (id: String, stored: [UInt8]) {
        let path = peers.tmp.path + "/" + name
        try Data((0..<count).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: path))
        let sent = try peers["alice"].json(["send", conversation, "--file", path])
        let id = try #require(sent["messageId"] as? String, "\(sent)")
        return (id, try #require(stored(peers["alice"], conversation, id)))
    }

    /// Alice sends a file while bob's daemon is down; returns once bob's worker stored its
    /// reference (relayd and the worker run on), the daemon still down.
    static func sendWhileBobIsAway(_ peers: RelayPeers, _ conversation: String, count: Int) throws -> (id: String, stored: [UInt8]) {
        let bob = peers["bob"]
        bob.stopDaemon()
        let sent = try send(peers, conversation, count: count)
        try bob.waitUntil("bob's worker stored the reference", timeoutMs: 60_000) { try bob.storedMessage(id: sent.id) != nil }
        return sent
    }

    @Test("a 300,000-byte file reaches bob and carol: each daemon fetches it at once, and each ends with alice's stored file byte for byte, available, no partial file")
    func fetchedAtOnce() throws {
        guard let peers = try RelayPeers.make(["alice", "bob", "carol"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiners: ["bob", "carol"])
            let (id, original) = try Self.send(peers, trip, count: 300_000)
            for member in ["bob", "carol"] {
                try peers[member].waitUntil("\(member)'s copy is available", timeoutMs: 60_000) {
                    Self.state(peers, member, trip, id: id) == "available"
                }
                #expect(Self.stored(peers[member], trip, id) == original, "\(member) holds the stored file, byte for byte")
                #expect(Self.files(peers[member], trip) == [id], "no partial file left: \(Self.files(peers[member], trip))")
                let shown = try #require(Self.attachment(peers, member, trip, id: id))
                #expect(shown["bytesDone"] == nil && shown["failure"] == nil, "\(shown)")
                let read = try peers[member].cli(["read", trip]).stdout
                #expect(read.contains("📎 scan.pdf (293.0 KiB, available)"), "\(read)")
            }
        }
    }

    @Test("bob's daemon is down when the file comes: the worker stores the reference, and the daemon fetches the file when it starts")
    func fetchedWhenTheDaemonStarts() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let bob = peers["bob"]
            let (id, original) = try Self.sendWhileBobIsAway(peers, trip, count: 200_000)
            #expect(Self.stored(bob, trip, id) == nil, "nothing fetched while the daemon is down")
            try bob.startDaemon()
            try bob.waitUntil("bob's copy is available", timeoutMs: 60_000) { Self.state(peers, "bob", trip, id: id) == "available" }
            #expect(Self.stored(bob, trip, id) == original)
        }
    }

    @Test("bob killed after 3 of 5 pieces (attachment.piece@3): the partial file holds exactly 3 whole pieces and no file has its final name; the restart resumes and ends with the file whole")
    func killedMidFetchResumes() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let bob = peers["bob"]
            bob.stopDaemon()
            try bob.startDaemon(environment: [CrashPoint.variable: "attachment.piece@3"])
            let (id, original) = try Self.send(peers, trip, count: 300_000)
            #expect(try bob.diedAtCrashPoint("attachment.piece@3", timeoutMs: 60_000), "bob never reached the third piece")
            let partial = bob.group.attachmentsPath(conversationId: trip) + "/.\(id).partial"
            let held = try #require(FileManager.default.contents(atPath: partial), "the partial file stays for the restart")
            #expect(held.count == AttachmentPieces.range(2, storedLength: original.count).upperBound, "3 whole pieces: \(held.count)")
            #expect([UInt8](held) == Array(original.prefix(held.count)))
            #expect(Self.stored(bob, trip, id) == nil, "nothing under the final name")

            try bob.startDaemon()
            try bob.waitUntil("bob's copy is available", timeoutMs: 60_000) { Self.state(peers, "bob", trip, id: id) == "available" }
            #expect(Self.stored(bob, trip, id) == original)
            #expect(Self.files(bob, trip) == [id])
        }
    }

    @Test("bob killed with the file whole under its name but not yet recorded (attachment.fetched): the restart ends available, with the file once")
    func killedAfterTheRename() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let bob = peers["bob"]
            bob.stopDaemon()
            try bob.startDaemon(environment: [CrashPoint.variable: "attachment.fetched"])
            let (id, original) = try Self.send(peers, trip, count: 70_000)
            #expect(try bob.diedAtCrashPoint("attachment.fetched", timeoutMs: 60_000))
            try bob.startDaemon()
            try bob.waitUntil("bob's copy is available", timeoutMs: 60_000) { Self.state(peers, "bob", trip, id: id) == "available" }
            #expect(Self.stored(bob, trip, id) == original)
            #expect(Self.files(bob, trip) == [id])
        }
    }

    @Test("the relay no longer holds the file (expired or deleted) when bob comes back: failed with the relay's reason, nothing left on disk")
    func goneFromTheRelay() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let bob = peers["bob"]
            let (id, _) = try Self.sendWhileBobIsAway(peers, trip, count: 100_000)
            let reference = try AttachmentReference.decode(try #require(try peers["alice"].storedMessage(id: id)).content)
            try peers.relay().deleteAttachment(id: Hex.encode(reference.id))
            try bob.startDaemon()
            try bob.waitUntil("bob's copy failed", timeoutMs: 60_000) { Self.state(peers, "bob", trip, id: id) == "failed" }
            let shown = try #require(Self.attachment(peers, "bob", trip, id: id))
            #expect((shown["failure"] as? String)?.contains("does not hold piece 0") == true, "\(shown)")
            #expect(Self.files(bob, trip).isEmpty, "\(Self.files(bob, trip))")
            #expect(try bob.cli(["read", trip]).stdout.contains("failed: the relay does not hold piece 0"))
        }
    }

    @Test("a forged piece 2 on the relay (the pieces purged and published again by hand, piece 2 with one bit flipped): refused when it arrives, failed, and neither the partial nor a final file is kept")
    func forgedPieceRefused() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let bob = peers["bob"]
            let (id, original) = try Self.sendWhileBobIsAway(peers, trip, count: 300_000)
            let reference = try AttachmentReference.decode(try #require(try peers["alice"].storedMessage(id: id)).content)
            let attachmentId = Hex.encode(reference.id)
            let relay = try peers.relay()
            try relay.deleteAttachment(id: attachmentId)
            let pieces = AttachmentLayout.chunkCount(300_000)
            for piece in 0..<pieces {
                var bytes = Array(original[AttachmentPieces.range(piece, storedLength: original.count)])
                if piece == 2 { bytes[100] ^= 0x01 }
                relay.rawPublish(try #require(AttachmentStream.subject(id: attachmentId, piece: piece)), bytes: bytes)
            }
            try bob.waitUntil("the relay holds the forged pieces", timeoutMs: 20_000) {
                try relay.storedAttachmentPieces(id: attachmentId) == Set(0..<pieces)
            }
            try bob.startDaemon()
            try bob.waitUntil("bob's copy failed", timeoutMs: 60_000) { Self.state(peers, "bob", trip, id: id) == "failed" }
            let shown = try #require(Self.attachment(peers, "bob", trip, id: id))
            #expect((shown["failure"] as? String)?.contains("piece 2 refused") == true, "\(shown)")
            #expect(Self.files(bob, trip).isEmpty, "\(Self.files(bob, trip))")
        }
    }

    @Test("a file over bob's automatic size (SOTTO_ATTACHMENT_AUTO_FETCH_BYTES=100000) waits; one under it is fetched")
    func overTheAutomaticSizeWaits() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let bob = peers["bob"]
            bob.stopDaemon()
            try bob.startDaemon(environment: [AttachmentFetcherSetting.variable: "100000"])
            let (large, _) = try Self.send(peers, trip, count: 150_000, name: "large.bin")
            let (small, original) = try Self.send(peers, trip, count: 50_000, name: "small.bin")
            // The small file was sent after the large one: once it is fetched, the large one was considered.
            try bob.waitUntil("the small file is available", timeoutMs: 60_000) { Self.state(peers, "bob", trip, id: small) == "available" }
            #expect(Self.stored(bob, trip, small) == original)
            #expect(Self.state(peers, "bob", trip, id: large) == "waiting")
            #expect(Self.stored(bob, trip, large) == nil)
            #expect(Self.files(bob, trip) == [small])
        }
    }

    @Test("sotto save of a file over the automatic size fetches it then, whatever its size, and writes the plaintext; of a file the relay lost it says why and writes nothing")
    func saveFetchesWhenAsked() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let bob = peers["bob"]
            bob.stopDaemon()
            try bob.startDaemon(environment: [AttachmentFetcherSetting.variable: "0"])
            let path = peers.tmp.path + "/big.bin"
            let plaintext = (0..<150_000).map { _ in UInt8.random(in: 0...255) }
            try Data(plaintext).write(to: URL(fileURLWithPath: path))
            let id = try #require(try peers["alice"].json(["send", trip, "--file", path])["messageId"] as? String)
            let (lost, _) = try Self.send(peers, trip, count: 10_000, name: "lost.txt")
            try bob.waitUntil("bob has both references", timeoutMs: 60_000) {
                Self.state(peers, "bob", trip, id: id) == "waiting" && Self.state(peers, "bob", trip, id: lost) == "waiting"
            }
            let out = peers.tmp.path + "/bob-out"
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            let saved = try bob.cli(["save", id, out])
            #expect(saved.status == 0, "\(saved)")
            #expect(FileManager.default.contents(atPath: out + "/big.bin").map { [UInt8]($0) } == plaintext, "the plaintext, byte for byte")
            #expect(Self.state(peers, "bob", trip, id: id) == "available")

            let reference = try AttachmentReference.decode(try #require(try peers["alice"].storedMessage(id: lost)).content)
            try peers.relay().deleteAttachment(id: Hex.encode(reference.id))
            let refused = try bob.cli(["save", lost, out])
            #expect(refused.status != 0 && refused.stderr.contains("could not be fetched: the relay does not hold piece 0"), "\(refused)")
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []) == ["big.bin"])
            #expect(Self.state(peers, "bob", trip, id: lost) == "failed")
        }
    }

    @Test("a leave keeps the files on the relay for the others (it only marks them not needed); an explode deletes every piece of every file of the conversation from the relay, and from each device")
    func explodePurgesTheRelay() throws {
        guard let peers = try RelayPeers.make(["alice", "bob", "carol"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiners: ["bob", "carol"])
            // Neither bob nor carol fetches, so the files stay on the relay (§6.1).
            for member in ["bob", "carol"] {
                peers[member].stopDaemon()
                try peers[member].startDaemon(environment: [AttachmentFetcherSetting.variable: "0"])
            }
            let (first, _) = try Self.send(peers, trip, count: 200_000, name: "one.bin")
            let (second, _) = try Self.send(peers, trip, count: 20_000, name: "two.bin")
            let relay = try peers.relay()
            for id in [first, second] {
                try peers["bob"].waitUntil("bob has \(id.prefix(8))", timeoutMs: 60_000) { Self.state(peers, "bob", trip, id: id) == "waiting" }
            }
            let pieces = { () throws -> UInt64 in try relay.attachmentStreamUsage().messages }
            // Each file's pieces and its need (2: bob and carol).
            let total = UInt64(AttachmentLayout.chunkCount(200_000) + AttachmentLayout.chunkCount(20_000) + 2)
            #expect(try pieces() == total)

            _ = try peers["carol"].json(["leave", trip])
            try peers["carol"].waitUntil("carol's copy of the conversation is gone", timeoutMs: 60_000) {
                !FileManager.default.fileExists(atPath: peers["carol"].group.attachmentsPath(conversationId: trip))
            }
            try peers["alice"].waitUntil("alice learns carol left", timeoutMs: 60_000) {
                let members = try peers["alice"].query("SELECT count(*) FROM member WHERE conversationId = ?", [.text(trip)])[0].int64(0)
                return members == 2
            }
            // Carol's leave marks each file she never fetched (one of two): bob may still need them.
            try peers["carol"].waitUntil("carol's leave marked both files", timeoutMs: 60_000) { try pieces() == total + 2 }
            #expect(try pieces() == total + 2, "a leave deletes nothing from the relay: the others may still need the files")

            _ = try peers["alice"].json(["explode", trip])
            #expect(try pieces() == 0, "the explode purged every piece before it answered")
            for member in ["alice", "bob"] {
                try peers[member].waitUntil("\(member)'s files are gone", timeoutMs: 60_000) {
                    !FileManager.default.fileExists(atPath: peers[member].group.attachmentsPath(conversationId: trip))
                }
            }
        }
    }

    @Test("an automatic size that is not a number of bytes stops the daemon at start with exit 78 and a line naming it")
    func badAutomaticSizeRefused() throws {
        let tmp = try TemporaryDirectory(prefix: "rs-autofetch")
        defer { tmp.remove() }
        for (index, value) in ["-1", "104857601", "25MiB", ""].enumerated() {
            let root = tmp.path + "/case\(index)"
            let environment = ["SOTTO_KEY_STORE": "file", "SOTTO_GROUP_DIR": root + "/group", "SOTTO_RUNTIME_DIR": root + "/run",
                               "PATH": "/usr/bin:/bin", AttachmentFetcherSetting.variable: value]
            let daemon = try LoggedProcess.launch(try builtExecutable("sotto"), ["daemon"], environment: environment)
            // A daemon that took the setting would serve forever: give it 20 s, then fail.
            let stopped = (try? waitUntil("the daemon exits", timeout: 20) { !daemon.isRunning }) != nil
            if !stopped { daemon.signal(SIGKILL) }
            let status = daemon.waitForExit()
            let stderr = daemon.output.joined(separator: "\n")
            #expect(stopped && status == 78, "'\(value)': \(stderr)")
            #expect(stderr.contains("\(AttachmentFetcherSetting.variable)=\(value) is not a number of bytes from 0 to 104857600"), "\(stderr)")
        }
    }
}

/// The variable's name as the tests spell it (the daemon's `AttachmentFetcher.automaticLimitSetting`).
enum AttachmentFetcherSetting {
    static let variable = "SOTTO_ATTACHMENT_AUTO_FETCH_BYTES"
}

extension RelayReceivingAttachmentTests {
    @Test("bob receives on a direct endpoint and alice on a relay: bob's daemon fetches her file from her relay, where she put it, the relay deletes it once he has it, and he saves it byte for byte")
    func directMemberFetchesFromTheSendersRelay() throws {
        guard let peers = try RelayPeers.make(["alice"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            // No SOTTO_RELAY: bob's member entry is his own push socket.
            let bob = try Device.start("bob", in: peers.tmp.path)
            defer { bob.stop() }
            let alice = peers["alice"]
            let trip = try #require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
            let code = try #require(try alice.json(["invite", trip, "--expires", "1h"])["code"] as? String)
            _ = try bob.json(["join", code, "--profile-name", "bob"])
            try bob.waitUntil("bob is in", timeoutMs: 60_000) { try bob.conversation(trip)?["state"] as? String == "active" }
            try alice.waitUntil("alice lists bob", timeoutMs: 60_000) { try alice.conversation(trip)?["members"] as? Int == 2 }
            #expect(try alice.query("SELECT endpoint FROM member WHERE conversationId = ? AND endpoint LIKE 'unix:%'", [.text(trip)]).count == 1,
                    "bob's entry is a direct endpoint")

            let path = peers.tmp.path + "/minutes.pdf"
            let original = try RelaySendingAttachmentTests.writeFile(path, count: 300_000)
            let id = try #require(try alice.json(["send", trip, "--file", path])["messageId"] as? String)
            try bob.waitUntil("bob's daemon fetches it from alice's relay", timeoutMs: 60_000) {
                (bob.messages(trip).first { $0["id"] as? String == id }?["attachment"] as? [String: Any])?["state"] as? String == "available"
            }
            // Bob was the one member that fetches it there (attachment-relay.md §6.1): it leaves the relay.
            let relay = try peers.relay()
            try bob.waitUntil("the relay holds nothing of the file", timeoutMs: 60_000) { try relay.attachmentStreamUsage().messages == 0 }
            let out = peers.tmp.path + "/out"
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            #expect(try bob.cli(["save", id, out]).status == 0)
            #expect(FileManager.default.contents(atPath: out + "/minutes.pdf").map { [UInt8]($0) } == original)
        }
    }
}
