import Foundation
import SharedStore
import Testing
import TestSupport
import SottoCrypto
import SottoWire

/// Issue #20: the master key in a real `gnome-keyring-daemon` on a private session bus,
/// between a real daemon and real workers on a real push socket (docs/adr/0045): install,
/// receive, restart, lock after a "boot" (the kernel keyring emptied), a push refused
/// retryably while locked, unlock, the same push accepted; the key is never re-created.
@Suite("Keyring: the master key in the Secret Service", .serialized,
       .enabled(if: SecretServiceSession.unavailableReason == nil, "\(SecretServiceSession.unavailableReason ?? "")"))
struct KeyringLifecycleTests {
    static func keystoreFiles(_ device: Device) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: device.group.keystorePath)) ?? []
    }

    /// Empties the kernel keyring entry, as a reboot does.
    static func forgetKernelKey(_ device: Device) {
        let ring = KernelKeyring(description: KernelKeyring.description(keystoreDirectory: device.group.keystorePath))
        if let serial = ring.search() { ring.invalidate(serial: serial) }
    }

    static func texts(_ device: Device, _ conversation: String) -> [String] {
        device.messages(conversation).compactMap { $0["text"] as? String }
    }

    @Test("install, receive, restart, locked after a boot: refused retryably, accepted after unlock")
    func lockedIsAState() async throws {
        try await onOwnThread { try self.lockedIsAStateSteps() }
    }

    private func lockedIsAStateSteps() throws {
        let tmp = try TemporaryDirectory(prefix: "keyring")
        defer { tmp.remove() }
        let keyring = try SecretServiceSession.start(in: tmp.path)
        defer { keyring.stop() }
        let alice = try Device.start("alice", in: tmp.path,
                                     environment: keyring.environment.merging(["SOTTO_KEYRING_RETRY_MS": "50"]) { $1 })
        defer {
            alice.stop()
            Self.forgetKernelKey(alice)
        }

        // Install: the key is in the Secret Service, not in the directory.
        let stored = try #require(try keyring.lookup(group: alice.group.path), "no key in the Secret Service\n\(alice.daemonLog)")
        #expect(stored.count == 64 && Hex.decode(stored, count: 32) != nil, "entry: \(stored.count) characters")
        #expect(!Self.keystoreFiles(alice).contains("master.key"), "\(Self.keystoreFiles(alice))")
        #expect(try !alice.groupFilesContain(try #require(Hex.decode(stored, count: 32))), "the key's bytes are in the group directory")
        let status = try alice.cli(["status"])
        #expect(status.stdout.contains("master key in the Secret Service"), "\(status.stdout)")

        // Receive.
        let conversation = try #require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
        let member = try RemoteMember.join(conversationId: conversation, databasePath: alice.group.databasePath)
        let first = try PushClient.send(try member.push("before restart"), to: alice.runtime.pushSocketPath)
        #expect(first.contains("\"ok\":true"), "\(first)")

        // Restart: the same key, everything readable.
        alice.stopDaemon()
        try alice.startDaemon()
        #expect(Self.texts(alice, conversation) == ["before restart"])

        // A boot with the keyring locked: the kernel keyring is empty, the daemon waits.
        alice.stopDaemon()
        // A clean stop takes the kernel copy with it (a boot would too).
        let ring = KernelKeyring(description: KernelKeyring.description(keystoreDirectory: alice.group.keystorePath))
        #expect(ring.search() == nil, "the kernel keyring still holds the key after the daemon stopped")
        try keyring.lock()
        try alice.launchDaemon()
        try alice.waitUntil("status says the daemon waits for the locked keyring") {
            let waiting = try alice.cli(["status"])
            return waiting.status == 75 && waiting.stdout.contains("locked") && waiting.stdout.contains("sotto key import")
        }
        let id = Hex.encode(SecureRandom.bytes(16))
        let payload = try member.push("while locked", id: id)
        let refused = try PushClient.send(payload, to: alice.runtime.pushSocketPath)
        #expect(refused.contains("\"ok\":false") && refused.contains("\"retry\":true") && refused.contains("locked"), "\(refused)")
        #expect(try alice.query("SELECT count(*) FROM message WHERE id = ?", [.text(id)])[0].int64(0) == 0)

        // Unlock: the daemon continues by itself, the same push is accepted, nothing lost.
        try keyring.unlock()
        do {
            try alice.waitUntil("the daemon serves after the unlock") { try alice.cli(["status"]).status == 0 }
        } catch {
            Issue.record("\(error)\nstatus: \(try alice.cli(["status"]))\n\(alice.daemonLog)\nkeyring: \(keyring.log)")
            throw error
        }
        let accepted = try PushClient.send(payload, to: alice.runtime.pushSocketPath)
        #expect(accepted.contains("\"ok\":true"), "\(accepted)\n\(alice.daemonLog)")
        #expect(Self.texts(alice, conversation) == ["before restart", "while locked"])
        #expect(try keyring.lookup(group: alice.group.path) == stored, "the key was re-created")
        #expect(alice.daemonLog.contains("waiting for the master key"), "\(alice.daemonLog)")
    }

    @Test("a fresh install while the keyring is locked (nothing to read, nowhere to write): the daemon waits, and continues after the unlock")
    func freshInstallLocked() async throws {
        try await onOwnThread { try self.freshInstallLockedSteps() }
    }

    /// Found while testing docs/adr/0060: the store into a locked collection failed, which
    /// start-up took for a refusal (exit 78), though locked is a state the user ends.
    private func freshInstallLockedSteps() throws {
        let tmp = try TemporaryDirectory(prefix: "keyring-fresh-locked")
        defer { tmp.remove() }
        let keyring = try SecretServiceSession.start(in: tmp.path)
        defer { keyring.stop() }
        try keyring.lock()
        let alice = try Device.start("alice", in: tmp.path,
                                     environment: keyring.environment.merging(["SOTTO_KEYRING_RETRY_MS": "50"]) { $1 },
                                     waitForDaemon: false)
        defer {
            alice.stop()
            Self.forgetKernelKey(alice)
        }
        do {
            try alice.waitUntil("status says the keyring is locked", timeoutMs: 30_000) {
                let waiting = try alice.cli(["status"])
                return waiting.status == 75 && waiting.stdout.contains("locked")
            }
        } catch {
            Issue.record("\(error)\n\(alice.daemonLog)")
            throw error
        }
        #expect(alice.daemonIsRunning, "\(alice.daemonLog)")
        try keyring.unlock()
        do {
            try alice.waitUntil("the daemon serves after the unlock", timeoutMs: 30_000) { try alice.cli(["status"]).status == 0 }
        } catch {
            Issue.record("\(error)\nstatus: \(try alice.cli(["status"]))\n\(alice.daemonLog)\nkeyring: \(keyring.log)")
            throw error
        }
        #expect(try keyring.lookup(group: alice.group.path)?.count == 64)
    }

    @Test("garbage in the Secret Service: a clear error, nothing changed, no new key")
    func garbageEntry() async throws {
        try await onOwnThread { try self.garbageEntrySteps() }
    }

    private func garbageEntrySteps() throws {
        let tmp = try TemporaryDirectory(prefix: "keyring-garbage")
        defer { tmp.remove() }
        let keyring = try SecretServiceSession.start(in: tmp.path)
        defer { keyring.stop() }
        let group = tmp.path + "/alice/group"
        // A setting that names no key store: EX_CONFIG before anything is created.
        let bogus = try ChildProcess.run(try builtExecutable("sotto"), ["daemon"], environment: keyring.environment.merging([
            "SOTTO_GROUP_DIR": group, "SOTTO_RUNTIME_DIR": tmp.path + "/alice/run", "SOTTO_KEY_STORE": "keychain",
        ]) { $1 })
        #expect(bogus.status == 78 && bogus.stderr.contains("expected keyring, credential or file"), "exit \(bogus.status): \(bogus.stderr)")
        #expect(!FileManager.default.fileExists(atPath: group), "the group directory was created")
        for wrong in ["00112233", String(repeating: "zz", count: 32), String(repeating: "ab", count: 33)] {
            try keyring.store(group: group, secret: wrong)
            let result = try ChildProcess.run(try builtExecutable("sotto"), ["daemon"], environment: keyring.environment.merging([
                "SOTTO_GROUP_DIR": group, "SOTTO_RUNTIME_DIR": tmp.path + "/alice/run",
            ]) { $1 })
            #expect(result.status == 78, "exit \(result.status): \(result.stderr)")
            #expect(result.stderr.contains("not a 32-byte key"), "\(result.stderr)")
            #expect(try keyring.lookup(group: group) == wrong, "the entry was changed")
            let files = (try? FileManager.default.contentsOfDirectory(atPath: group + "/keystore")) ?? []
            #expect(!files.contains("master.key"), "\(files)")
        }
    }

    @Test("a Secret Service that does not answer: a bounded wait, a clear reason, then it continues")
    func silentService() async throws {
        try await onOwnThread { try self.silentServiceSteps() }
    }

    private func silentServiceSteps() throws {
        let tmp = try TemporaryDirectory(prefix: "keyring-silent")
        defer { tmp.remove() }
        let keyring = try SecretServiceSession.start(in: tmp.path)
        defer { keyring.stop() }
        keyring.freeze()
        let environment = keyring.environment.merging(["SOTTO_KEYRING_TIMEOUT_MS": "300", "SOTTO_KEYRING_RETRY_MS": "50"]) { $1 }
        let alice = try Device.start("alice", in: tmp.path, environment: environment, waitForDaemon: false)
        defer {
            alice.stop()
            Self.forgetKernelKey(alice)
        }
        try alice.waitUntil("status says no Secret Service answers", timeoutMs: 10_000) {
            let waiting = try alice.cli(["status"])
            return waiting.status == 75 && waiting.stdout.contains("no answer before the deadline")
        }
        #expect(alice.daemonIsRunning)
        keyring.thaw()
        try alice.waitUntil("the daemon serves once the Secret Service answers") { try alice.cli(["status"]).status == 0 }
        #expect(try keyring.lookup(group: alice.group.path)?.count == 64)
    }
    @Test("a reset keyring: the daemon refuses a new key over sealed identities; the recovery key brings it back")
    func resetKeyring() async throws {
        try await onOwnThread { try self.resetKeyringSteps() }
    }

    private func resetKeyringSteps() throws {
        let tmp = try TemporaryDirectory(prefix: "keyring-reset")
        defer { tmp.remove() }
        let keyring = try SecretServiceSession.start(in: tmp.path)
        defer { keyring.stop() }
        let alice = try Device.start("alice", in: tmp.path, environment: keyring.environment)
        defer {
            alice.stop()
            Self.forgetKernelKey(alice)
        }
        let conversation = try #require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
        let member = try RemoteMember.join(conversationId: conversation, databasePath: alice.group.databasePath)
        #expect(try PushClient.send(try member.push("kept"), to: alice.runtime.pushSocketPath).contains("\"ok\":true"))
        let export = try alice.cli(["key", "export"])
        #expect(export.status == 0 && export.stdout.hasPrefix("SOTTO1-"), "\(export.stderr)")
        let stored = try keyring.lookup(group: alice.group.path)

        // A new desktop, a reset keyring: no entry, no kernel copy.
        alice.stopDaemon()
        try keyring.clear(group: alice.group.path)
        Self.forgetKernelKey(alice)
        let refused = try ChildProcess.run(try builtExecutable("sotto"), ["daemon"], environment: alice.environment)
        #expect(refused.status == 78, "exit \(refused.status): \(refused.stderr)")
        #expect(refused.stderr.contains("sotto key import") && refused.stderr.contains("will not create a new key"), "\(refused.stderr)")
        #expect(try keyring.lookup(group: alice.group.path) == nil, "a key was created over sealed identities")

        // A wrong recovery key changes nothing; the right one goes into the Secret Service.
        let wrong = try alice.cli(["key", "import"], stdin: RecoveryKey.encode(SecretBytes(SecureRandom.bytes(32))))
        #expect(wrong.status == 65 && wrong.stderr.contains("nothing was changed"), "\(wrong.stderr)")
        #expect(try keyring.lookup(group: alice.group.path) == nil)
        let imported = try alice.cli(["key", "import"], stdin: export.stdout)
        #expect(imported.status == 0 && imported.stdout.contains("Secret Service"), "\(imported.stdout) \(imported.stderr)")
        #expect(try keyring.lookup(group: alice.group.path) == stored)
        try alice.startDaemon()
        #expect(Self.texts(alice, conversation) == ["kept"])
    }
}
