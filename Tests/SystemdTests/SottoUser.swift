import Foundation
import SottoWire
import TestSupport

/// The test user of a `SystemdUserManager` using Sotto the way the README says: the installed
/// `sotto` run as that user inside the namespace, `systemctl --user`, and what the journal
/// holds for each unit (read as root: the volatile journal has no per-user files).
///
/// ```swift
/// let me = SottoUser(manager)
/// let created = try me.json(["new", "--name", "Trip"])
/// try me.waitUntil("relayd connected", timeoutMs: 60_000) { me.journal("sotto-relayd.service").contains { $0.hasPrefix("relay connected") } }
/// ```
struct SottoUser {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// `sotto install --user`'s binary directory, as the user's processes see it.
    static let installedSotto = SystemdUserManager.homeInside + "/.local/bin/sotto"

    let manager: SystemdUserManager

    init(_ manager: SystemdUserManager) { self.manager = manager }

    /// The user's home as this process sees it.
    var home: String { manager.home.path }

    // MARK: - Commands as the user

    /// The installed `sotto ARGS`.
    func sotto(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try manager.user([Self.installedSotto] + arguments)
    }

    /// The installed `sotto ARGS --json`; throws unless it exits 0 with a JSON object.
    func json(_ arguments: [String]) throws -> [String: Any] {
        let result = try sotto(arguments + ["--json"])
        guard result.status == 0,
              let object = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] else {
            throw Failure(description: "sotto \(arguments.joined(separator: " ")) exited \(result.status): \(result.stdout) \(result.stderr)")
        }
        return object
    }

    /// `sh -c SCRIPT` as the user in a login-like environment (HOME, XDG_RUNTIME_DIR, PATH).
    func shell(_ script: String) throws -> (status: Int32, stdout: String, stderr: String) {
        try manager.user(["sh", "-c", script])
    }

    /// `systemctl --user ARGS`: its exit status and stderr (what a user would read).
    func systemctl(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let result = try manager.user(["systemctl", "--user"] + arguments)
        return (result.status, result.stderr)
    }

    /// One property of a unit (`systemctl --user show -p NAME --value UNIT`).
    func property(_ unit: String, _ name: String) throws -> String {
        try manager.systemctl(["show", "-p", name, "--value", unit])
    }

    /// `sotto read --json` as message objects, oldest first (empty when the daemon does not answer).
    func messages(_ conversation: String) -> [[String: Any]] {
        ((try? json(["read", conversation, "--limit", "500"]))?["messages"] as? [[String: Any]]) ?? []
    }

    // MARK: - The journal

    /// The lines one user unit wrote, oldest first. A process that exits right after writing
    /// (relayd refusing its settings, a worker) is often gone before journald reads its
    /// cgroup and name from /proc, and its last lines then carry no `_SYSTEMD_USER_UNIT` or
    /// `_COMM` (a full run missed relayd's exit-78 line so): the stream's own
    /// `SYSLOG_IDENTIFIER`, which systemd sets from ExecStart, is matched too.
    func journal(_ unit: String) -> [String] {
        journalLines(unitMatches(unit))
    }

    /// One unit's journal (nil: every process of the user's) as one text, for a failure message.
    func journalText(_ unit: String?) -> String {
        journalLines(unit.map(unitMatches) ?? []).joined(separator: "\n")
    }

    /// Every line `sotto-notify` wrote (each socket-activated instance of sotto-push@.service).
    func workerJournal() -> [String] {
        journalLines(["SYSLOG_IDENTIFIER=sotto-notify"])
    }

    /// `_SYSTEMD_USER_UNIT=unit`, or (`+`, journalctl's OR) the identifier of the program a
    /// plain `NAME.service` runs (`sotto`, `sotto-relayd`), with the same uid.
    private func unitMatches(_ unit: String) -> [String] {
        guard unit.hasSuffix(".service"), !unit.contains("@") else { return ["_SYSTEMD_USER_UNIT=\(unit)"] }
        return ["_SYSTEMD_USER_UNIT=\(unit)", "+", "_UID=\(manager.uid)", "SYSLOG_IDENTIFIER=\(unit.dropLast(".service".count))"]
    }

    /// The whole journal of the sandbox (system and user units), for what must never appear.
    func wholeJournal() -> String {
        (try? manager.root(["journalctl", "--no-pager", "-o", "cat"]).stdout) ?? ""
    }

    private func journalLines(_ matches: [String]) -> [String] {
        let output = (try? manager.root(["journalctl", "--no-pager", "-o", "cat", "_UID=\(manager.uid)"] + matches).stdout) ?? ""
        return output.split(separator: "\n").map(String.init)
    }

    // MARK: - Waiting

    /// Polls `condition` until it holds (true) or `timeoutMs` passes (false).
    func poll(timeoutMs: Int64, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = WallClock.nowMs() + timeoutMs
        while true {
            if try condition() { return true }
            if WallClock.nowMs() > deadline { return false }
            usleep(100_000)
        }
    }

    /// Polls `condition` until it holds; throws, saying `what`, when `timeoutMs` passes first.
    func waitUntil(_ what: String, timeoutMs: Int64 = 60_000, _ condition: () throws -> Bool) throws {
        guard try poll(timeoutMs: timeoutMs, condition) else {
            throw Failure(description: "timed out after \(timeoutMs) ms waiting for: \(what)")
        }
    }
}
