import Foundation
import SottoWire
import TestSupport
import Testing

/// `sotto install --user` exactly as the README says, for a fresh user with an empty home,
/// under a real `systemd --user` manager (SystemdUserManager): the daemon becomes active, a
/// push through the real sotto-push.socket is stored, a SIGKILL is followed by a restart,
/// the installed binary upgrades itself, the journal shows each line once with its
/// priority, and `sotto uninstall --user` leaves nothing behind.
@Suite("A real service manager", .serialized, .enabled(if: getuid() == 0, "needs root for a private mount namespace"))
struct UserServiceTests {
    /// A uid no account has, different per test process so that two runs at once (two
    /// worktrees, `make test` beside `make stress`) never share a user's cgroup.
    static let uid = UInt32(61_000 + getpid() % 4_000)

    @Test("install, push, kill, upgrade, uninstall under systemd --user")
    func lifecycle() async throws {
        try await onOwnThread { try self.lifecycleSteps() }  // a minute of blocking steps
    }

    @Test("install prints the daemon's own reason when sotto.service does not become active")
    func installSaysWhy() async throws {
        try await onOwnThread { try self.installSaysWhySteps() }
    }

    /// A start-up failure a user can make: a relay.env whose SOTTO_RELAY is no relay URL. The
    /// daemon exits 78 before READY=1; install must print why, not only "see systemctl status".
    private func installSaysWhySteps() throws {
        let (started, skip) = try SystemdUserManager.start(uid: Self.uid)
        guard let manager = started else { return sandboxUnavailable("A real service manager", skip) }
        defer { manager.stop() }
        let me = SottoUser(manager)
        let configure = try me.shell("mkdir -p ~/.config/sotto && (umask 077; "
            + "printf 'SOTTO_RELAY=http://relay.example:4222\\n' > ~/.config/sotto/relay.env)")
        try #require(configure.status == 0, "relay.env: \(configure.stderr)")

        let install = try manager.user([try builtExecutable("sotto"), "install", "--user", "--key-store", "file"])
        #expect(install.status == 1, "install: \(install.stdout) \(install.stderr)")
        #expect(install.stderr.contains("The daemon says: ") && install.stderr.contains("malformed relay URL"),
                "install did not print the daemon's reason: \(install.stderr)\n\(me.journalText("sotto.service"))")
        let statusText = try me.property("sotto.service", "StatusText")
        #expect(statusText.contains("malformed relay URL"), "StatusText: \(statusText)")
        #expect(try manager.systemctl(["is-active", "sotto.service"]) != "active")
    }

    private func lifecycleSteps() throws {
        let (started, skip) = try SystemdUserManager.start(uid: Self.uid)
        guard let manager = started else { return sandboxUnavailable("A real service manager", skip) }
        defer { manager.stop() }
        let me = SottoUser(manager)
        let home = manager.home.path
        let built = try builtExecutable("sotto")

        // A fresh account: no ~/.local/share at all.
        #expect(!FileManager.default.fileExists(atPath: home + "/.local"))
        // The key in a file (KeyringUserServiceTests covers the keyring); the upgrade below keeps it.
        let install = try manager.user([built, "install", "--user", "--key-store", "file"])
        #expect(install.status == 0, "install: \(install.stdout) \(install.stderr)\n\(me.journalText("sotto.service"))")
        #expect(install.stdout.contains("(active)"), "\(install.stdout)")
        #expect(try manager.systemctl(["is-active", "sotto.service"]) == "active")
        #expect(try manager.systemctl(["is-active", "sotto-push.socket"]) == "active")
        let group = home + "/.local/share/sotto"
        let mode = (try FileManager.default.attributesOfItem(atPath: group)[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o700, "group directory mode \(String(mode, radix: 8))")
        #expect(FileManager.default.isExecutableFile(atPath: home + "/.local/bin/sotto-notify"))
        // The memory ceiling reaches the daemon's cgroup (v1 memory controller here).
        let cgroup = "/sys/fs/cgroup/memory/user.slice/user-\(Self.uid).slice/user@\(Self.uid).service/app.slice/sotto.service"
        let limit = try manager.root(["cat", cgroup + "/memory.limit_in_bytes"]).stdout
        #expect(limit.trimmingCharacters(in: .whitespacesAndNewlines) == String(256 << 20), "memory limit: \(limit)")

        // A push through the real socket, from a member added to a conversation made by the CLI.
        let created = try me.json(["new", "--name", "Trip"])
        let conversation = try #require(created["conversationId"] as? String, "\(created)")
        let member = try RemoteMember.join(conversationId: conversation, databasePath: group + "/shared.sqlite")
        let socket = manager.outsidePath(manager.runtimeDirectory + "/sotto/push.sock")
        let ack = try PushClient.send(try member.push("hello through systemd"), to: socket)
        #expect(ack.contains("\"ok\":true"), "ack: \(ack)\n\(me.journalText(nil))")
        #expect(readTexts(me, conversation).contains("hello through systemd"))

        // SIGKILL: the manager restarts the daemon.
        let firstPid = try manager.systemctl(["show", "-p", "MainPID", "--value", "sotto.service"])
        #expect(try manager.user(["systemctl", "--user", "kill", "-s", "KILL", "sotto"]).status == 0)
        let restartedPid = try waitForNewMainPid(manager, other: firstPid, timeoutMs: 15_000)
        #expect(restartedPid != nil, "not restarted after SIGKILL\n\(me.journalText("sotto.service"))")

        // SIGABRT, what the watchdog sends: the process ends at once (no crash backtracer
        // holding it, SWIFT_BACKTRACE in the unit), so the restart comes after RestartSec.
        #expect(try manager.user(["systemctl", "--user", "kill", "-s", "ABRT", "sotto"]).status == 0)
        let abortedPid = try waitForNewMainPid(manager, other: restartedPid ?? firstPid, timeoutMs: 10_000)
        #expect(abortedPid != nil, "not restarted within 10 s of SIGABRT\n\(me.journalText("sotto.service"))")

        // Upgrade: the installed binary, found through PATH, from another directory.
        let upgrade = try manager.user(["sh", "-c", "cd / && PATH=$HOME/.local/bin:$PATH sotto install --user"])
        #expect(upgrade.status == 0, "upgrade: \(upgrade.stdout) \(upgrade.stderr)")
        #expect(try manager.systemctl(["is-active", "sotto.service"]) == "active")
        let upgradedPid = try manager.systemctl(["show", "-p", "MainPID", "--value", "sotto.service"])
        #expect(upgradedPid != abortedPid && upgradedPid != "0", "the daemon was not restarted on upgrade")
        #expect(readTexts(me, conversation).contains("hello through systemd"))

        // The journal: one prefix per line (journald's), the priority parsed from <N>.
        let workerLog = try manager.root(["journalctl", "--no-pager", "-o", "cat", "-p", "info..info",
                                          "_UID=\(Self.uid)", "SYSLOG_IDENTIFIER=sotto-notify"]).stdout
        #expect(workerLog.contains("push stored message="), "worker journal: \(workerLog)")
        #expect(!workerLog.contains("sotto-notify["), "doubled prefix: \(workerLog)")
        let daemonLog = me.journalText("sotto.service")
        #expect(!daemonLog.contains("sotto["), "doubled prefix: \(daemonLog)")

        // The group directory is recreated when it has gone (ExecStartPre), not a crash loop.
        #expect(try manager.user(["systemctl", "--user", "stop", "sotto.service"]).status == 0)
        try FileManager.default.removeItem(atPath: group)
        let restart = try manager.user(["systemctl", "--user", "start", "sotto.service"])
        #expect(restart.status == 0, "start without a group directory: \(restart.stderr)\n\(me.journalText("sotto.service"))")
        let recreatedMode = (try? FileManager.default.attributesOfItem(atPath: group)[.posixPermissions] as? Int) ?? 0
        #expect(recreatedMode == 0o700, "recreated group directory mode \(String(recreatedMode, radix: 8))")

        // A daemon that fails at every start ends up failed (start limit), not restarting forever.
        let dropIn = home + "/.config/systemd/user/sotto.service.d"
        try FileManager.default.createDirectory(atPath: dropIn, withIntermediateDirectories: true)
        try "[Service]\nExecStart=\nExecStart=/bin/false\n".write(toFile: dropIn + "/broken.conf", atomically: true, encoding: .utf8)
        #expect(try manager.user(["systemctl", "--user", "daemon-reload"]).status == 0)
        _ = try manager.user(["systemctl", "--user", "restart", "sotto.service"])
        // Five starts 2 s apart take ~10 s; on a loaded 2-core machine a full suite once took
        // just over 20 s (NRestarts=5, failed, a moment after the bound). A unit restarting
        // forever never becomes "failed", however long we wait.
        let gaveUp = try me.poll(timeoutMs: 120_000) {
            try manager.systemctl(["show", "-p", "ActiveState", "--value", "sotto.service"]) == "failed"
        }
        let state = (try? manager.systemctl(["show", "-p", "ActiveState,Result,NRestarts", "sotto.service"])) ?? ""
        #expect(gaveUp, "still restarting: \(state)")
        try FileManager.default.removeItem(atPath: dropIn)
        #expect(try manager.user(["systemctl", "--user", "daemon-reload"]).status == 0)

        // Uninstall: nothing left but the data, which it says it kept; then the data too.
        let uninstall = try manager.user(["sh", "-c", "cd / && PATH=$HOME/.local/bin:$PATH sotto uninstall --user"])
        #expect(uninstall.status == 0, "uninstall: \(uninstall.stdout) \(uninstall.stderr)")
        #expect(uninstall.stdout.contains("kept your data in /home/sotto-test/.local/share/sotto"), "\(uninstall.stdout)")
        #expect(leftovers(manager).isEmpty, "left behind: \(leftovers(manager))")
        #expect(FileManager.default.fileExists(atPath: group + "/shared.sqlite"))
        let purge = try manager.user([built, "uninstall", "--user", "--remove-data"])
        #expect(purge.status == 0, "\(purge.stdout) \(purge.stderr)")
        #expect(!FileManager.default.fileExists(atPath: group))
        #expect(leftovers(manager).isEmpty)
    }

    // MARK: - Helpers

    private func readTexts(_ me: SottoUser, _ conversation: String) -> [String] {
        me.messages(conversation).compactMap { $0["text"] as? String }
    }

    /// Waits until sotto.service is active with a main PID other than `other`.
    private func waitForNewMainPid(_ manager: SystemdUserManager, other: String, timeoutMs: Int64) throws -> String? {
        let deadline = WallClock.nowMs() + timeoutMs
        while WallClock.nowMs() < deadline {
            let pid = try manager.systemctl(["show", "-p", "MainPID", "--value", "sotto.service"])
            if pid != other, pid != "0", try manager.systemctl(["is-active", "sotto.service"]) == "active" { return pid }
            usleep(50_000)
        }
        return nil
    }

    /// What the user's manager and home still hold of Sotto, except the group directory.
    private func leftovers(_ manager: SystemdUserManager) -> [String] {
        var found: [String] = []
        let units = (try? manager.systemctl(["list-units", "--all", "--plain", "--no-legend", "sotto*"])) ?? "?"
        if !units.isEmpty { found.append("units: \(units)") }
        let files = (try? manager.systemctl(["list-unit-files", "--plain", "--no-legend", "sotto*"])) ?? "?"
        if !files.isEmpty { found.append("unit files: \(files)") }
        let home = manager.home.path
        if let walker = FileManager.default.enumerator(atPath: home) {
            for case let path as String in walker
            where path.contains("sotto") && !path.hasPrefix(".local/share/sotto") {
                found.append(path)
            }
        }
        if FileManager.default.fileExists(atPath: manager.outsidePath(manager.runtimeDirectory + "/sotto")) {
            found.append("\(manager.runtimeDirectory)/sotto")
        }
        return found
    }

}
