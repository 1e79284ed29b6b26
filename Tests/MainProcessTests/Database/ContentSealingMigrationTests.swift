import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// The v9 → v10 migration (docs/adr/0052) on a real daemon: a file a v9 build wrote, with
/// plaintext, is sealed all or nothing. A SIGKILL at each of its crash points leaves the v9
/// file as it was; the next start seals it, `sotto read` shows every message, and no
/// plaintext is left in any file after the daemon's checkpoint.
@Suite("Content sealing migration", .serialized)
struct ContentSealingMigrationTests {
    static func unique(_ label: String) -> String { "\(label)-\(Hex.encode(SecureRandom.bytes(6)))" }

    @Test("v9 with plaintext, killed at a step or not: afterwards read shows all, no plaintext in the files",
          arguments: ["migrate.sealing.conversationSealed", "migrate.sealing.allSealed", ""])
    func migrate(crashAt: String) throws {
        let tmp = try TemporaryDirectory(prefix: "seal")
        let (device, conversationId, name, profile, texts) = try Self.v9Install(in: tmp.path)
        defer { device.stop() }

        if !crashAt.isEmpty {
            try device.launchDaemon(environment: [CrashPoint.variable: crashAt])
            #expect(try device.diedAtCrashPoint(crashAt, timeoutMs: 60_000))
            // The old state, whole: still v9, still in clear.
            #expect(try device.query("PRAGMA user_version")[0].int64(0) == 9)
            #expect(try device.query("SELECT count(*) FROM message WHERE CAST(content AS TEXT) LIKE 'v9-text-%'")[0].int64(0) == 5)
        }
        try Self.expectSealedOnStart(device, conversationId, name: name, profile: profile, texts: texts)
    }

    /// What a v9 install holds: an identity in the keystore and its conversation in clear; its
    /// daemon stopped. `groupIn`: where its group directory goes (a test file system's mount).
    static func v9Install(in parent: String, groupIn: String? = nil) throws
        -> (device: Device, conversationId: String, name: String, profile: String, texts: [String]) {
        let device = try Device.start("dana", in: parent, groupIn: groupIn)
        device.stopDaemon()
        var handedOver = false
        defer { if !handedOver { device.stop() } }
        let me = Identity.generate()
        try Keystore(directory: device.group.keystorePath, environment: [:]).save(me)
        let conversationId = Hex.encode(SecureRandom.bytes(16))
        let name = Self.unique("v9-name"), profile = Self.unique("v9-profile")
        let texts = (0..<5).map { Self.unique("v9-text-\($0)") }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: device.group.databasePath + suffix) }
        let messages = texts.enumerated().map { index, text in
            "('\(Hex.encode(SecureRandom.bytes(16)))', '\(conversationId)', '\(me.inboxId)', \(1_700_000_000_000 + index), 1, "
                + "'xmtp.org/text:1.0', CAST('\(text)' AS BLOB), NULL, 1, 'sent')"
        }.joined(separator: ", ")
        do {
            _ = try OlderSchemaFile.open(device.group.databasePath, version: 9, rows: """
                INSERT INTO inbox(inboxId, clientId, createdAt, lastActivityAt) VALUES ('\(me.inboxId)', '\(me.clientId)', 1, 2);
                INSERT INTO conversation(id, inboxId, clientId, topic, name, creatorInboxId, createdAt, state)
                    VALUES ('\(conversationId)', '\(me.inboxId)', '\(me.clientId)', '/sotto/1/c/\(conversationId)', '\(name)',
                            '\(me.inboxId)', 1, 'active');
                INSERT INTO conversation_local_state(conversationId) VALUES ('\(conversationId)');
                INSERT INTO member(conversationId, inboxId, publicKey, endpoint, clientId, role)
                    VALUES ('\(conversationId)', '\(me.inboxId)', '\(me.publicKey.hex)', '\(device.endpoint)', '\(me.clientId)', 'creator');
                INSERT INTO member_profile(conversationId, inboxId, name) VALUES ('\(conversationId)', '\(me.inboxId)', '\(profile)');
                INSERT INTO message(id, conversationId, senderInboxId, sentAt, receivedAt, contentType, content, fallback,
                    isOutgoing, deliveryStatus) VALUES \(messages);
                """)
        }
        // The scan finds a v9 file's plaintext: it can fail.
        #expect(try device.groupFilesContain(Array(texts[0].utf8)))
        handedOver = true
        return (device, conversationId, name, profile, texts)
    }

    @Test("sotto repair of a v9 file rebuilds it at v9, saying so; the next start seals it: read shows all, and only the kept damaged file holds plaintext")
    func repairOfAV9File() throws {
        let tmp = try TemporaryDirectory(prefix: "seal")
        let (device, conversationId, name, profile, texts) = try Self.v9Install(in: tmp.path)
        defer { device.stop() }

        let repair = try device.cli(["repair"])
        #expect(repair.status == 0, "\(repair.stdout) \(repair.stderr)")
        #expect(repair.stdout.contains("rebuilt at schema version 9"), "\(repair.stdout)")
        #expect(repair.stdout.contains("in clear"), "\(repair.stdout)")
        #expect(try device.query("PRAGMA user_version")[0].int64(0) == 9)

        try Self.expectSealedOnStart(device, conversationId, name: name, profile: profile, texts: texts,
                                     except: "damaged-")
    }

    /// The daemon starts, migrates to the current version, and shows every text and the name;
    /// after its checkpoint no file (but those named `except…`) holds any of them in clear.
    static func expectSealedOnStart(_ device: Device, _ conversationId: String, name: String, profile: String,
                                    texts: [String], except keptPrefix: String? = nil) throws {
        try device.startDaemon()
        #expect(try device.query("PRAGMA user_version")[0].int64(0) == Schema.currentVersion)
        let read = try device.cli(["read", conversationId, "--limit", "50"])
        for text in texts { #expect(read.stdout.contains(text), "\(text) not in: \(read.stdout) \(read.stderr)") }
        #expect(try device.conversation(conversationId)?["name"] as? String == name)

        device.stopDaemon()   // its checkpoint
        for needle in texts + [name, profile] {
            let files = FileSearch.files(containing: Array(needle.utf8), under: device.group.path)
                .filter { file in keptPrefix.map { !(file as NSString).lastPathComponent.hasPrefix($0) } ?? true }
            #expect(files == [], "\(needle) left in clear")
        }
        try device.startDaemon()
    }
}
