import Foundation
import SharedStore
import Testing
import TestSupport
import SottoCrypto
import SottoWire

/// Issue #20: an install that kept its key in `keystore/master.key` moves it into the Secret
/// Service at the next start, and the file is overwritten and removed; a SIGKILL at each
/// named step (ADR 0017) leaves either the old install or the moved one, never a lost key
/// (docs/adr/0045).
@Suite("Keyring: master.key moves into the Secret Service", .serialized,
       .enabled(if: SecretServiceSession.unavailableReason == nil, "\(SecretServiceSession.unavailableReason ?? "")"))
struct KeyringMigrationTests {
    @Test("all or nothing across a SIGKILL", arguments: ["", "keyring.keyStored", "keyring.keyFileRenamed"])
    func migration(crashAt: String) async throws {
        try await onOwnThread { try self.migrationSteps(crashAt: crashAt) }
    }

    private func migrationSteps(crashAt: String) throws {
        let tmp = try TemporaryDirectory(prefix: "keyring-move")
        defer { tmp.remove() }
        let keyring = try SecretServiceSession.start(in: tmp.path)
        defer { keyring.stop() }
        // The old install: its key in a file.
        let alice = try Device.start("alice", in: tmp.path,
                                     environment: ["DBUS_SESSION_BUS_ADDRESS": keyring.busAddress, "SOTTO_KEY_STORE": "file"])
        defer {
            alice.stop()
            let ring = KernelKeyring(description: KernelKeyring.description(keystoreDirectory: alice.group.keystorePath))
            if let serial = ring.search() { ring.invalidate(serial: serial) }
        }
        let conversation = try #require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
        let member = try RemoteMember.join(conversationId: conversation, databasePath: alice.group.databasePath)
        #expect(try PushClient.send(try member.push("old install"), to: alice.runtime.pushSocketPath).contains("\"ok\":true"))
        // Asked for: every status says the key is in a file, and what that means.
        let fileStatus = try alice.cli(["status"]).stdout
        #expect(fileStatus.contains("master key in a key file") && fileStatus.contains("SOTTO_KEY_STORE=file"), "\(fileStatus)")
        let keyFile = alice.group.keystorePath + "/master.key"
        let oldKey = try #require(FileManager.default.contents(atPath: keyFile).map { [UInt8]($0) })
        #expect(oldKey.count == 32)
        alice.stopDaemon()

        if !crashAt.isEmpty {
            try alice.launchDaemon(environment: keyring.environment.merging([CrashPoint.variable: crashAt]) { $1 })
            #expect(try alice.diedAtCrashPoint(crashAt, timeoutMs: 30_000), "\(crashAt) was never reached\n\(alice.daemonLog)")
            alice.stopDaemon()
        }
        try alice.startDaemon(environment: keyring.environment)

        #expect(try keyring.lookup(group: alice.group.path) == Hex.encode(oldKey), "\(alice.daemonLog)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: alice.group.keystorePath)) ?? []
        #expect(!left.contains("master.key") && !left.contains { $0.hasPrefix(".deleted-") || $0.hasPrefix(".tmp-") }, "\(left)")
        #expect(try !alice.groupFilesContain(oldKey), "the old key's bytes are still in the group directory")
        #expect(alice.messages(conversation).compactMap { $0["text"] as? String } == ["old install"])
        let after = try PushClient.send(try member.push("after the move"), to: alice.runtime.pushSocketPath)
        #expect(after.contains("\"ok\":true"), "\(after)")
    }
}
