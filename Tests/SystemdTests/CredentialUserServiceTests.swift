import Foundation
import SharedStore
import Testing
import TestSupport
import SottoCrypto
import SottoWire

/// docs/adr/0054 under a real `systemd --user` with the installed units: a headless machine
/// (no Secret Service, no session bus) whose user manager received the credential
/// `sotto-keystore-key`, as PID 1 hands it to user@UID.service after decrypting it with the
/// host key or the TPM. `install --user --key-store credential` passes it on to the daemon and
/// to the sandboxed worker; no key file is ever made, and one left from `--key-store file`
/// with the same key is wiped.
@Suite("A real service manager: the master key as a systemd credential", .serialized,
       .enabled(if: getuid() == 0, "needs root for a private mount namespace"))
struct CredentialUserServiceTests {
    static let uid = UInt32(54_000 + getpid() % 3_000)

    @Test("install --key-store credential: daemon and worker take the manager's credential, no key file, a push acks ok; a key file with the same key is wiped, one with another is refused")
    func credentialUnderSystemd() async throws {
        try await onOwnThread { try self.steps() }
    }

    private func steps() throws {
        let credentials = try TemporaryDirectory(prefix: "sotto-credentials")
        var key = SecureRandom.bytes(32)
        defer { SecretBytes.zero(&key) }
        try Data(key).write(to: URL(fileURLWithPath: credentials.path + "/" + Keystore.credentialName))
        let (started, skip) = try SystemdUserManager.start(uid: Self.uid, managerCredentials: credentials.path)
        guard let manager = started else { return sandboxUnavailable("the master key as a systemd credential", skip) }
        defer { manager.stop() }
        let me = SottoUser(manager)
        let built = try builtExecutable("sotto")

        let install = try manager.user([built, "install", "--user", "--key-store", "credential"])
        #expect(install.status == 0, "install: \(install.stdout) \(install.stderr)\n\(me.journalText("sotto.service"))")
        #expect(install.stdout.contains("sotto-push@.service.d/key-store.conf"), "\(install.stdout)")
        try me.waitUntil("the daemon serves", timeoutMs: 60_000) { try me.sotto(["status"]).status == 0 }
        let status = try me.sotto(["status"]).stdout
        #expect(status.contains("from the systemd credential \(Keystore.credentialName)"), "\(status)")
        let group = me.home + "/.local/share/sotto"
        #expect(!FileManager.default.fileExists(atPath: group + "/keystore/master.key"))

        // The sandboxed worker (PrivateUsers=yes, no session bus) opens the identity with it.
        let conversation = try #require(try me.json(["new", "--name", "Trip"])["conversationId"] as? String)
        let member = try RemoteMember.join(conversationId: conversation, databasePath: group + "/shared.sqlite")
        let socket = manager.outsidePath(manager.runtimeDirectory + "/sotto/push.sock")
        let first = try PushClient.send(try member.push("through the credential"), to: socket)
        #expect(first.contains("\"ok\":true"), "ack: \(first)\n\(me.journalText(nil))")

        // A key file left from `--key-store file` with the same key: wiped at the next start.
        try Data(Hex.encode(key).utf8).write(to: URL(fileURLWithPath: group + "/keystore/master.key"))
        _ = chown(group + "/keystore/master.key", Self.uid, Self.uid)
        _ = chmod(group + "/keystore/master.key", 0o600)
        #expect(try manager.user(["systemctl", "--user", "restart", "sotto.service"]).status == 0)
        try me.waitUntil("the daemon serves again", timeoutMs: 60_000) { try me.sotto(["status"]).status == 0 }
        #expect(!FileManager.default.fileExists(atPath: group + "/keystore/master.key"))
        let second = try PushClient.send(try member.push("after the restart"), to: socket)
        #expect(second.contains("\"ok\":true"), "ack: \(second)")
        #expect(me.messages(conversation).compactMap { $0["text"] as? String } == ["through the credential", "after the restart"])

        // One holding another key: refused, nothing removed.
        try Data(Hex.encode(SecureRandom.bytes(32)).utf8).write(to: URL(fileURLWithPath: group + "/keystore/master.key"))
        _ = chown(group + "/keystore/master.key", Self.uid, Self.uid)
        _ = chmod(group + "/keystore/master.key", 0o600)
        _ = try manager.user(["systemctl", "--user", "restart", "sotto.service"])
        let refused = try me.poll(timeoutMs: 60_000) {
            try manager.systemctl(["show", "-p", "ExecMainStatus", "--value", "sotto.service"]) == "78"
        }
        let state = try manager.systemctl(["show", "-p", "ExecMainStatus,ActiveState,SubState,NRestarts", "sotto.service"])
        #expect(refused, "\(state)\n\(me.journalText("sotto.service").suffix(3000))")
        #expect(me.journalText("sotto.service").contains("holds another key than the systemd credential"),
                "\(me.journalText("sotto.service"))")
        #expect(FileManager.default.fileExists(atPath: group + "/keystore/master.key"))
    }
}
