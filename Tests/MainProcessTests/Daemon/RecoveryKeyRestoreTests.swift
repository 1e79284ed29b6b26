import Foundation
import SottoCrypto
import TestSupport
import Testing

/// Issue #20 item 3 and 5 (docs/adr/0038): a backup of the group directory without its key
/// file, restored with the recovery key `sotto key export` printed.
@Suite("Recovery key restore", .serialized)
struct RecoveryKeyRestoreTests {
    @Test("A backup restored without master.key: the daemon refuses and names the way back; a wrong or garbled key changes nothing; the recovery key brings every message back and new pushes arrive")
    func restoreWithRecoveryKey() async throws {
        // Minutes of blocking steps: on a thread of their own, not the test pool's (async tests starve).
        try await onOwnThread { try self.restoreWithRecoveryKeySteps() }
    }

    private func restoreWithRecoveryKeySteps() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob])
        _ = try bob.json(["send", trip, "before the backup, from bob"])
        _ = try alice.json(["send", trip, "before the backup, from alice"])
        try alice.waitUntil("alice has bob's text") { hasText(alice, trip, "before the backup, from bob") }

        let export = try alice.cli(["key", "export"])
        #expect(export.status == 0)
        let recovery = export.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(recovery.hasPrefix("SOTTO1-"))
        #expect(export.stderr.contains("never next to a backup"))

        // The backup, as the README says: the directory (daemon stopped), without the key file.
        alice.stop()
        let backup = net.tmp.path + "/alice-backup"
        #expect(try ChildProcess.run("/bin/cp", ["-a", alice.group.path, backup]).status == 0)
        try FileManager.default.removeItem(atPath: backup + "/keystore/master.key")
        // The machine is lost; the backup comes back.
        try FileManager.default.removeItem(atPath: alice.group.path)
        #expect(try ChildProcess.run("/bin/cp", ["-a", backup, alice.group.path]).status == 0)
        let keyFile = alice.group.keystorePath + "/master.key"

        #expect(throws: Device.Failure.self) { try alice.startDaemon() }
        #expect(alice.daemonLog.contains("sotto key import"))
        #expect(!FileManager.default.fileExists(atPath: keyFile), "the daemon made a new key over sealed identities")

        let wrong = try alice.cli(["key", "import"], stdin: RecoveryKey.encode(SecretBytes(SecureRandom.bytes(32))) + "\n")
        #expect(wrong.status == 65)
        #expect(wrong.stderr.contains("not the key they were sealed with"))
        for garbage in ["", "hello", String(recovery.dropLast()), String(recovery.dropLast(3)) + "AAA", String(repeating: "x", count: 4_000)] {
            let refused = try alice.cli(["key", "import"], stdin: garbage)
            #expect(refused.status == 65, "\(garbage.prefix(12))")
            #expect(!refused.stderr.contains(String(recovery.dropFirst(7).prefix(11))), "the error repeats the key")
        }
        #expect(!FileManager.default.fileExists(atPath: keyFile))

        let imported = try alice.cli(["key", "import"], stdin: recovery.lowercased() + "\n")
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("opens all"))
        try alice.startDaemon()
        try alice.startPushSocket()
        #expect(hasText(alice, trip, "before the backup, from bob"))
        #expect(hasText(alice, trip, "before the backup, from alice"))
        _ = try bob.json(["send", trip, "after the restore"])
        try alice.waitUntil("alice gets a text sent after the restore") { hasText(alice, trip, "after the restore") }
        _ = try alice.json(["send", trip, "alice is back"])
        try bob.waitUntil("bob gets alice's text") { hasText(bob, trip, "alice is back") }

        // With the daemon running, import is refused (exit 75) and changes nothing.
        let running = try alice.cli(["key", "import"], stdin: recovery)
        #expect(running.status == 75)
    }
}
