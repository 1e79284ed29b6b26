import Foundation
import SottoCrypto
import TestSupport
import Testing
import SottoWire

/// The README's "Through a relay" steps for a fresh user under a real `systemd --user`
/// (SystemdUserManager): `sotto install --user`, `~/.config/sotto/relay.env`, `systemctl --user
/// restart sotto` and `enable --now sotto-relayd`. A peer device outside systemd talks to it
/// through a real `nats-server -js` on loopback; with its daemon stopped the installed
/// sotto-relayd hands a queued mailbox to the socket-activated sotto-notify in one batch
/// (docs/push-batch.md: SO_PEERCRED between two `PrivateUsers=yes` units); a malformed
/// relay.env (or credentials file) stops the units with exit 78, without a restart and
/// without the secret in the journal.
@Suite("The relay under a real service manager", .serialized,
       .enabled(if: getuid() == 0, "needs root for a private mount namespace"))
struct RelayUserServiceTests {
    /// Apart from UserServiceTests' range (61,000-64,999): another test process (another
    /// worktree, `make stress`) may run that suite at the same time.
    static let uid = UInt32(57_000 + getpid() % 4_000)
    static let offlineCount = 5

    @Test("README relay setup under systemd --user: both units active, messages both ways, an offline batch, crash, upgrade, uninstall")
    func relayPath() async throws {
        try await onOwnThread { try self.relayPathSteps() }  // up to a minute of blocking steps
    }

    @Test("a malformed relay.env or credentials file: exit 78 from sotto-relayd and sotto, no restart, no secret in the journal")
    func malformedSettings() async throws {
        try await onOwnThread { try self.malformedSettingsSteps() }
    }

    // MARK: - The relay path

    private func relayPathSteps() throws {
        guard NatsServer.isInstalled else {
            print(NatsServer.skipMessage)
            return
        }
        guard let me = try startedUser() else { return }
        defer { me.manager.stop() }
        let tmp = try TemporaryDirectory(prefix: "rsd")
        defer { tmp.remove() }
        // A relay that wants a user and password (README: optional credentials in relay.env).
        let (user, password) = ("sotto-dev", "s3cret pass-\(UInt32.random(in: 100_000...999_999))")
        let server = try NatsServer.prepare(storeDirectory: tmp.path + "/jetstream", extraArguments: ["--user", user, "--pass", password])
        try server.restart()
        defer { server.stop() }
        // A host name, as a real relay has, resolved inside the units' sandbox.
        let relay = "nats://localhost:\(server.port)"

        // README: install, the relay file, restart sotto, enable sotto-relayd.
        try installAndConfigure(me, relayLine: "SOTTO_RELAY=\(relay)\nSOTTO_RELAY_USER=\(user)\nSOTTO_RELAY_PASSWORD=\(password)")
        #expect(try me.systemctl(["restart", "sotto"]).status == 0, "\(me.journal("sotto.service").suffix(10))")
        let enable = try me.systemctl(["enable", "--now", "sotto-relayd"])
        #expect(enable.status == 0, "enable --now sotto-relayd: \(enable.stderr)")
        #expect(try me.property("sotto.service", "ActiveState") == "active")
        // The daemon read relay.env too (its ready line names the relay).
        let daemonSaidRelay = me.poll(timeoutMs: 30_000) {
            me.journal("sotto.service").last { $0.hasPrefix("ready: ") }?.hasSuffix(", relay \(relay)") == true
        }
        #expect(daemonSaidRelay, "\(me.journal("sotto.service").suffix(5))")
        try me.waitUntil("sotto-relayd connected to \(relay)") {
            me.journal("sotto-relayd.service").contains("relay connected: \(relay)")
        }
        #expect(try me.property("sotto-relayd.service", "ActiveState") == "active")
        // relayd runs in a user namespace of its own (PrivateUsers=yes), not the manager's.
        let relaydPid = try me.property("sotto-relayd.service", "MainPID")
        let uidMap = (try? String(contentsOfFile: "/proc/\(relaydPid)/uid_map", encoding: .utf8)) ?? ""
        #expect(!uidMap.contains("4294967295") && uidMap.contains(String(Self.uid)), "relayd's uid_map: \(uidMap)")

        let peer = try RelayPeerDevice.start(in: tmp.path, relay: relay, user: user, password: password)
        defer { peer.stop() }
        let conversation = try diagnosed(me, peer) { try joinThroughRelay(me, peer) }
        // Both devices' endpoints are the relay's URL: invite, join request and membership went through it.
        let endpoints = try peer.device.query("SELECT endpoint FROM member WHERE conversationId = ?", [.text(conversation)])
            .map { try $0.string(0) }
        #expect(endpoints.count == 2 && endpoints.allSatisfy { $0 == relay }, "members' endpoints: \(endpoints)")

        // Both ways: the systemd device's send is `relayed` (then `delivered` once the peer's
        // receipt is back: receipts are on by default), and the peer stores it.
        let outgoing = try #require(try me.json(["send", conversation, "from systemd"])["messageId"] as? String)
        try diagnosed(me, peer) {
            try me.waitUntil("the systemd device's send shows relayed or delivered") {
                let status = me.messages(conversation).first { $0["id"] as? String == outgoing }?["deliveryStatus"] as? String
                return status == "relayed" || status == "delivered"
            }
            try me.waitUntil("the peer received it") { peer.receivedTexts(conversation) == ["from systemd"] }
        }
        _ = try peer.send(conversation, "from peer")
        try diagnosed(me, peer) {
            try me.waitUntil("the systemd device received the peer's message") { incomingTexts(me, conversation) == ["from peer"] }
        }

        try daemonStopped(me, peer, conversation)
        try offlineBatch(me, peer, conversation)
        try crashRestartsRelayd(me)
        try upgradeRestartsRelayd(me)
        // The relayd the upgrade started delivers (120 s: see offlineBatch on acks in flight).
        _ = try peer.send(conversation, "after the upgrade")
        try diagnosed(me, peer) {
            try me.waitUntil("the message sent after the upgrade", timeoutMs: 120_000) {
                incomingTexts(me, conversation).last == "after the upgrade"
            }
        }

        // Uninstall stops relayd with the rest and says that it kept relay.env.
        let uninstall = try me.shell("cd / && PATH=$HOME/.local/bin:$PATH sotto uninstall --user")
        #expect(uninstall.status == 0, "uninstall: \(uninstall.stdout) \(uninstall.stderr)")
        #expect(uninstall.stdout.contains("kept your relay settings in \(SystemdUserManager.homeInside)/.config/sotto/relay.env"),
                "\(uninstall.stdout)")
        #expect(try me.manager.systemctl(["list-units", "--all", "--plain", "--no-legend", "sotto*"]).isEmpty)
        let everything = me.wholeJournal()
        #expect(!everything.isEmpty && !everything.contains(password), "the relay password reached the journal")
    }

    /// The daemon stopped, relayd running: the peer's messages are stored as they come (the
    /// worker writes them; the daemon reads them when it is back).
    private func daemonStopped(_ me: SottoUser, _ peer: RelayPeerDevice, _ conversation: String) throws {
        #expect(try me.systemctl(["stop", "sotto"]).status == 0)
        let ids = try ["while stopped 1", "while stopped 2"].map { try peer.send(conversation, $0) }
        try diagnosed(me, peer) {
            try me.waitUntil("the worker stored both while the daemon is stopped") {
                let lines = me.workerJournal()
                return ids.allSatisfy { id in lines.contains { $0.hasPrefix("push stored message=\(id) ") } }
            }
        }
        #expect(try me.property("sotto.service", "ActiveState") == "inactive", "the daemon was not to store them")
    }

    /// relayd stopped too (the device is off), the peer's messages wait on the relay; relayd
    /// alone (the daemon still stopped) hands them to the socket-activated worker in one batch.
    /// Then the daemon starts and reads every message once, in order.
    private func offlineBatch(_ me: SottoUser, _ peer: RelayPeerDevice, _ conversation: String) throws {
        #expect(try me.systemctl(["stop", "sotto-relayd"]).status == 0)
        let texts = (1...Self.offlineCount).map { "offline \($0)" }
        let ids = try texts.map { try peer.send(conversation, $0) }
        try diagnosed(me, peer) {
            try me.waitUntil("all \(ids.count) on the relay") { try ids.allSatisfy { try peer.outboxStates($0) == ["relayed"] } }
        }
        let workerLinesBefore = me.workerJournal().count
        #expect(try me.systemctl(["start", "sotto-relayd"]).status == 0)
        try diagnosed(me, peer) {
            // 120 s: an ack still in flight when relayd was stopped (it exits on SIGTERM at once)
            // holds the mailbox back one ack wait (40 s) after the start, for its order.
            try me.waitUntil("the worker stored all \(ids.count)", timeoutMs: 120_000) {
                let lines = me.workerJournal()
                return ids.allSatisfy { id in lines.contains { $0.hasPrefix("push stored message=\(id) ") } }
            }
        }
        #expect(try me.property("sotto.service", "ActiveState") == "inactive", "the daemon was not to store them")
        // The batch exchange, not the §2 fallback: the worker took several pushes on one
        // connection, which it does only for a peer of its own uid (SO_PEERCRED) across the
        // two units' user namespaces.
        // The worker writes its batch line after the push lines: polled.
        let batched = me.poll(timeoutMs: 30_000) {
            me.workerJournal().dropFirst(workerLinesBefore).compactMap(Self.storedInBatch).contains { $0 >= 2 }
        }
        let batches = me.workerJournal().dropFirst(workerLinesBefore).compactMap(Self.storedInBatch)
        #expect(batched, "worker batches (pushes stored in each): \(batches)\n\(me.workerJournal().suffix(15))")
        let relaydLog = me.journal("sotto-relayd.service")
        #expect(!relaydLog.contains { $0.contains("does not take batches") }, "relayd fell back to single pushes: \(relaydLog.suffix(10))")

        #expect(try me.systemctl(["start", "sotto"]).status == 0, "\(me.journal("sotto.service").suffix(10))")
        try me.waitUntil("the daemon answers read") { !me.messages(conversation).isEmpty }
        #expect(incomingTexts(me, conversation) == ["from peer", "while stopped 1", "while stopped 2"] + texts, "once each, in order")
    }

    /// SIGKILL (a crash): the manager starts relayd again (Restart=on-failure) and it
    /// reconnects; the memory ceiling reaches its cgroup (v1 memory controller here).
    private func crashRestartsRelayd(_ me: SottoUser) throws {
        let cgroup = "/sys/fs/cgroup/memory/user.slice/user-\(Self.uid).slice/user@\(Self.uid).service/app.slice/sotto-relayd.service"
        let limit = try me.manager.root(["cat", cgroup + "/memory.limit_in_bytes"]).stdout
        #expect(limit.trimmingCharacters(in: .whitespacesAndNewlines) == String(64 << 20), "relayd's memory limit: \(limit)")
        let before = try me.property("sotto-relayd.service", "MainPID")
        let connected = me.journal("sotto-relayd.service").filter { $0.hasPrefix("relay connected:") }.count
        #expect(try me.systemctl(["kill", "-s", "KILL", "sotto-relayd"]).status == 0)
        try me.waitUntil("relayd started again after SIGKILL") {
            let pid = try me.property("sotto-relayd.service", "MainPID")
            let state = try me.property("sotto-relayd.service", "ActiveState")
            return pid != before && pid != "0" && state == "active"
        }
        try me.waitUntil("the new relayd connected") {
            me.journal("sotto-relayd.service").filter { $0.hasPrefix("relay connected:") }.count > connected
        }
    }

    /// `sotto install --user` again (an upgrade) restarts the running sotto-relayd, so it runs
    /// the new binary and unit, not the replaced (deleted) one.
    private func upgradeRestartsRelayd(_ me: SottoUser) throws {
        let before = try me.property("sotto-relayd.service", "MainPID")
        let upgrade = try me.shell("cd / && PATH=$HOME/.local/bin:$PATH sotto install --user")
        #expect(upgrade.status == 0, "upgrade: \(upgrade.stdout) \(upgrade.stderr)")
        let after = try me.property("sotto-relayd.service", "MainPID")
        #expect(after != before && after != "0", "sotto-relayd was not restarted by the upgrade (MainPID \(before) → \(after))")
        #expect(try me.property("sotto-relayd.service", "ActiveState") == "active")
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(after)/exe")) ?? "?"
        #expect(!exe.hasSuffix("(deleted)"), "relayd runs a replaced binary: \(exe)")
    }

    // MARK: - Malformed settings

    private func malformedSettingsSteps() throws {
        guard let me = try startedUser() else { return }
        defer { me.manager.stop() }
        let secret = "hunter2-\(UInt32.random(in: 100_000...999_999))"
        // A URL with user info (not allowed: credentials are separate) and the password beside it.
        try installAndConfigure(me, relayLine: "SOTTO_RELAY=nats://sam:\(secret)@127.0.0.1:4222\n"
                                + "SOTTO_RELAY_USER=sam\nSOTTO_RELAY_PASSWORD=\(secret)")
        _ = try me.systemctl(["enable", "--now", "sotto-relayd"])
        let restart = try me.systemctl(["restart", "sotto"])
        #expect(restart.status != 0, "sotto.service started with a malformed relay.env")
        for unit in ["sotto-relayd.service", "sotto.service"] {
            try me.waitUntil("\(unit) failed") { try me.property(unit, "ActiveState") == "failed" }
            // A restart would go through auto-restart (NRestarts > 0) before the start limit fails it.
            let state = try me.manager.systemctl(["show", "-p", "Result,ExecMainStatus,NRestarts", unit])
            #expect(try me.property(unit, "ExecMainStatus") == "78", "\(unit): \(state)")
            #expect(try me.property(unit, "NRestarts") == "0", "\(unit) restarted: \(state)")
            // journald files a stream's last line after systemd saw the exit: polled.
            let said = me.poll(timeoutMs: 30_000) {
                me.journal(unit).contains { $0.hasPrefix("malformed relay URL: ") && $0.contains("nats://…@127.0.0.1:4222") }
            }
            #expect(said, "\(unit)'s journal: \(me.journal(unit).suffix(10))")
        }

        // A well-formed URL with a credentials file others can read (the seed is a secret).
        let creds = SystemdUserManager.homeInside + "/.config/sotto/relay.creds"
        let loosen = try me.shell("printf 'seed-\(secret)\\n' > \(creds) && chmod 644 \(creds)"
                                  + " && printf 'SOTTO_RELAY=nats://127.0.0.1:4222\\nSOTTO_RELAY_CREDS=\(creds)\\n' > ~/.config/sotto/relay.env")
        try #require(loosen.status == 0, "\(loosen.stderr)")
        let linesBefore = me.journal("sotto-relayd.service").count
        #expect(try me.systemctl(["reset-failed", "sotto-relayd", "sotto"]).status == 0)
        _ = try me.systemctl(["start", "sotto-relayd"])
        try me.waitUntil("sotto-relayd failed again") { try me.property("sotto-relayd.service", "ActiveState") == "failed" }
        #expect(try me.property("sotto-relayd.service", "ExecMainStatus") == "78")
        #expect(try me.property("sotto-relayd.service", "NRestarts") == "0")
        let saidCreds = me.poll(timeoutMs: 30_000) {
            me.journal("sotto-relayd.service").dropFirst(linesBefore)
                .contains { $0.hasPrefix("malformed relay credentials: ") && $0.contains("\(creds) is readable by others") }
        }
        #expect(saidCreds, "relayd's journal: \(me.journal("sotto-relayd.service").dropFirst(linesBefore))")

        let everything = me.wholeJournal()
        #expect(!everything.isEmpty && !everything.contains(secret), "the password reached the journal")
    }

    // MARK: - Steps

    /// A fresh user's manager; nil (with the reason printed) where the sandbox cannot be made.
    private func startedUser() throws -> SottoUser? {
        let (started, skip) = try SystemdUserManager.start(uid: Self.uid)
        guard let manager = started else {
            sandboxUnavailable("The relay under a real service manager", skip)
            return nil
        }
        return SottoUser(manager)
    }

    /// `sotto install --user`, then relay.env written the way docs/relay.md shows (mkdir, and
    /// printf under umask 077), as the user.
    private func installAndConfigure(_ me: SottoUser, relayLine: String) throws {
        // These tests keep the key in a file; KeyringUserServiceTests covers the keyring.
        let install = try me.manager.user([try builtExecutable("sotto"), "install", "--user", "--key-store", "file"])
        try #require(install.status == 0, "install: \(install.stdout) \(install.stderr)\n\(me.journal("sotto.service").suffix(10))")
        let escaped = relayLine.replacingOccurrences(of: "\n", with: "\\n")
        let configure = try me.shell("mkdir -p ~/.config/sotto && (umask 077; printf '\(escaped)\\n' > ~/.config/sotto/relay.env)")
        try #require(configure.status == 0, "relay.env: \(configure.stderr)")
        let file = me.home + "/.config/sotto/relay.env"
        let mode = (try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o600, "relay.env mode \(String(mode, radix: 8))")
    }

    /// The systemd device creates a conversation and invites; the peer joins. Returns its id
    /// once the peer is active and the systemd device lists two members.
    private func joinThroughRelay(_ me: SottoUser, _ peer: RelayPeerDevice) throws -> String {
        let id = try #require(try me.json(["new", "--name", "Relay"])["conversationId"] as? String)
        let code = try #require(try me.json(["invite", id, "--expires", "1h"])["code"] as? String)
        let joined = try peer.device.json(["join", code, "--profile-name", "peer"])
        #expect(joined["conversationId"] as? String == id)
        try me.waitUntil("the peer is active") { try peer.device.conversation(id)?["state"] as? String == "active" }
        try me.waitUntil("the systemd device lists 2 members") {
            let listed = try me.json(["ls"])["conversations"] as? [[String: Any]] ?? []
            return listed.first { $0["id"] as? String == id }?["members"] as? Int == 2
        }
        return id
    }

    // MARK: - Reading

    private func incomingTexts(_ me: SottoUser, _ conversation: String) -> [String] {
        me.messages(conversation).filter { $0["outgoing"] as? Bool == false && $0["contentType"] as? String == ContentType.text }
            .compactMap { $0["text"] as? String }
    }

    /// N from the worker's "batch of N: S stored, K ok" line: S, the pushes it stored.
    private static func storedInBatch(_ line: String) -> Int? {
        guard line.hasPrefix("batch of "), let colon = line.firstIndex(of: ":") else { return nil }
        return Int(line[line.index(after: colon)...].split(separator: " ").first ?? "")
    }

    /// Runs `body`; on a thrown error prints both devices' logs first.
    private func diagnosed<T>(_ me: SottoUser, _ peer: RelayPeerDevice, _ body: () throws -> T) throws -> T {
        do { return try body() } catch {
            print("""
                == systemd device: sotto.service
                \(me.journal("sotto.service").suffix(15).joined(separator: "\n"))
                == sotto-relayd.service
                \(me.journal("sotto-relayd.service").suffix(15).joined(separator: "\n"))
                == sotto-notify
                \(me.workerJournal().suffix(15).joined(separator: "\n"))
                == peer relayd
                \(peer.relayd.output.suffix(15).joined(separator: "\n"))
                == peer daemon
                \(peer.device.daemonLog.split(separator: "\n").suffix(15).joined(separator: "\n"))
                """)
            throw error
        }
    }
}
