import Foundation
import SharedStore
import Testing
import TestSupport
import SottoCrypto
import SottoWire

/// Issue #32, part 2: a real `gnome-keyring-daemon` that has no collection at all, as D-Bus
/// activation starts it for a user who never logged in to a desktop (docs/adr/0060). The
/// daemon waits and says what to do in a user's words, never a D-Bus path; a push meanwhile
/// is refused retryably; once a default keyring exists (made as Seahorse makes one) the
/// daemon continues by itself and keeps its new key there.
@Suite("Keyring: a Secret Service without a default keyring", .serialized,
       .enabled(if: SecretServiceSession.unavailableReason == nil, "\(SecretServiceSession.unavailableReason ?? "")"),
       .enabled(if: SecretServiceSession.defaultKeyringUnavailableReason == nil,
                "\(SecretServiceSession.defaultKeyringUnavailableReason ?? "")"))
struct KeyringNoDefaultCollectionTests {
    @Test("no default keyring: the daemon waits and names the fix; a push is refused retryably; a default keyring made later, it continues")
    func noDefaultKeyringIsAState() async throws {
        try await onOwnThread { try self.steps() }
    }

    private func steps() throws {
        let tmp = try TemporaryDirectory(prefix: "keyring-none")
        defer { tmp.remove() }
        let keyring = try SecretServiceSession.start(in: tmp.path, loginKeyring: false)
        defer { keyring.stop() }
        let alice = try Device.start("alice", in: tmp.path,
                                     environment: keyring.environment.merging(["SOTTO_KEYRING_RETRY_MS": "50"]) { $1 },
                                     waitForDaemon: false)
        defer {
            alice.stop()
            KeyringLifecycleTests.forgetKernelKey(alice)
        }

        // Waiting, not failed: status says why in words a user knows.
        var said = ""
        do {
            try alice.waitUntil("status says there is no default keyring", timeoutMs: 30_000) {
                let waiting = try alice.cli(["status"])
                said = waiting.stdout
                return waiting.status == 75 && said.contains("no default keyring")
            }
        } catch {
            Issue.record("\(error)\nstatus: \(said)\n\(alice.daemonLog)\nkeyring: \(keyring.log)")
            throw error
        }
        for fix in ["log in to a desktop session once", "Passwords and Keys (Seahorse)", "--key-store file",
                    "--key-store credential", "sotto continues once a default keyring exists"] {
            #expect(said.contains(fix), "status does not say \(fix): \(said)")
        }
        #expect(!said.contains("/org/freedesktop"), "status names a D-Bus path: \(said)")
        #expect(!said.contains("sotto key import"), "status offers an import that cannot store either: \(said)")
        #expect(!alice.daemonLog.contains("/org/freedesktop"), "the log names a D-Bus path: \(alice.daemonLog)")
        #expect(alice.daemonIsRunning, "the daemon exited: \(alice.daemonLog)")
        #expect(try keyring.lookup(group: alice.group.path) == nil)

        // A push meanwhile: the worker has no master key, so the sender keeps it (retry).
        let recipient = Identity.generate()
        let sealed = Envelope.seal(Array("while there is no keyring".utf8), recipient: recipient.publicKey,
                                   clientId: recipient.clientId, topic: "/sotto/1/c/" + Hex.encode(SecureRandom.bytes(16)))
        let ack = try PushClient.send(PushPayload(clientId: recipient.clientId, topic: nil, envelope: sealed).encode(),
                                      to: alice.runtime.pushSocketPath)
        #expect(ack.contains("\"ok\":false") && ack.contains("\"retry\":true"), "\(ack)")

        // Stopped while it waits: a clean exit. `sotto key import` (which needs the daemon
        // stopped) cannot store either, and says the same; nothing is changed.
        alice.stopDaemon()
        #expect(alice.daemonLog.contains("stopped while waiting for the master key"), "\(alice.daemonLog)")
        #expect(!FileManager.default.fileExists(atPath: alice.runtime.path + "/keyring-wait"))
        let imported = try alice.cli(["key", "import"], stdin: RecoveryKey.encode(SecretBytes(SecureRandom.bytes(32))))
        #expect(imported.status != 0 && imported.stderr.contains("no default keyring")
                    && imported.stderr.contains("nothing was changed") && !imported.stderr.contains("/org/freedesktop"),
                "exit \(imported.status): \(imported.stderr)")
        #expect(try keyring.lookup(group: alice.group.path) == nil)
        _ = try alice.launchDaemon()
        try alice.waitUntil("the daemon waits again", timeoutMs: 30_000) { try alice.cli(["status"]).status == 75 }

        // A default keyring appears: the daemon continues by itself, with its key kept there.
        let collection = try keyring.createDefaultKeyring()
        #expect(!collection.hasSuffix("/login"), "the test made the login keyring: \(collection)")
        do {
            try alice.waitUntil("the daemon serves once a default keyring exists", timeoutMs: 30_000) {
                try alice.cli(["status"]).status == 0
            }
        } catch {
            Issue.record("\(error)\nstatus: \(try alice.cli(["status"]))\n\(alice.daemonLog)\nkeyring: \(keyring.log)")
            throw error
        }
        let status = try alice.cli(["status"]).stdout
        #expect(status.contains("master key in the Secret Service"), "\(status)")
        #expect(try keyring.lookup(group: alice.group.path)?.count == 64)
        #expect(!FileManager.default.fileExists(atPath: alice.runtime.path + "/keyring-wait"))
        let created = try alice.json(["new", "--name", "Trip"])
        #expect(created["conversationId"] is String, "\(created)")
        #expect(alice.daemonLog.contains("waiting for the master key: the Secret Service has no default keyring"),
                "\(alice.daemonLog)")
    }

    @Test("no default keyring, then a desktop login (the keyring unlocked with a password makes its login keyring): the daemon continues")
    func loginMakesTheDefaultKeyring() async throws {
        try await onOwnThread { try self.loginSteps() }
    }

    private func loginSteps() throws {
        let tmp = try TemporaryDirectory(prefix: "keyring-login")
        defer { tmp.remove() }
        let keyring = try SecretServiceSession.start(in: tmp.path, loginKeyring: false)
        defer { keyring.stop() }
        let alice = try Device.start("alice", in: tmp.path,
                                     environment: keyring.environment.merging(["SOTTO_KEYRING_RETRY_MS": "50"]) { $1 },
                                     waitForDaemon: false)
        defer {
            alice.stop()
            KeyringLifecycleTests.forgetKernelKey(alice)
        }
        try alice.waitUntil("status says there is no default keyring", timeoutMs: 30_000) {
            let waiting = try alice.cli(["status"])
            return waiting.status == 75 && waiting.stdout.contains("no default keyring")
        }
        // What pam_gnome_keyring does at a login: the keyring daemon gets the password.
        try keyring.unlock()
        do {
            try alice.waitUntil("the daemon serves after the login", timeoutMs: 30_000) { try alice.cli(["status"]).status == 0 }
        } catch {
            Issue.record("\(error)\nstatus: \(try alice.cli(["status"]))\n\(alice.daemonLog)\nkeyring: \(keyring.log)")
            throw error
        }
        #expect(try keyring.lookup(group: alice.group.path)?.count == 64)
        #expect(try alice.json(["new", "--name", "Trip"])["conversationId"] is String)
    }
}
