import ArgumentParser
import Foundation
import SottoCrypto
import SottoClient
import SottoDaemon
import SottoWire

/// `sotto uninstall --user`: stops and disables the units, removes them and the installed
/// binaries; keeps the conversations and keys (~/.local/share/sotto) unless `--remove-data`.
struct UninstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uninstall",
        abstract: "Stop and remove the systemd user units and the installed binaries.",
        discussion: """
            Runs `systemctl --user disable --now` for sotto.service, sotto-push.socket and
            sotto-relayd.service, stops running push workers, removes the unit files and
            ~/.local/bin/sotto, sotto-daemon, sotto-notify and sotto-relayd. Your data (~/.local/share/sotto:
            conversations and keys) is kept unless you pass --remove-data, which deletes it
            for good. Your relay settings (~/.config/sotto/relay.env) are kept; it says so.
            """)

    @Flag(name: .long, help: "Uninstall for the current user (the only mode).")
    var user = false

    @Option(name: .long, help: "Where the binaries are (default ~/.local/bin).")
    var binDir: String?

    @Option(name: .long, help: "Where the unit files are (default $XDG_CONFIG_HOME/systemd/user or ~/.config/systemd/user).")
    var unitDir: String?

    @Flag(name: .long, help: "Also delete ~/.local/share/sotto: every conversation and key, for good.")
    var removeData = false

    func validate() throws {
        guard user else { throw ValidationError("only per-user installation is supported: pass --user") }
    }

    func run() throws {
        let paths = InstallPaths(binDir: binDir, unitDir: unitDir)
        let fileManager = FileManager.default
        var problems: [String] = []

        let managerReachable = Systemctl.run(["show-environment"]).succeeded
        if managerReachable {
            let disable = Systemctl.run(["disable", "--now", "sotto.service", "sotto-push.socket"])
            if !disable.succeeded, !disable.message.contains("does not exist") {
                problems.append("systemctl --user disable --now: \(disable.message)")
            }
            // Apart: an install older than the relay has no such unit, which must not fail the rest.
            _ = Systemctl.run(["disable", "--now", "sotto-relayd.service"])
            let stop = Systemctl.run(["stop", "sotto-push@*.service", "sotto-push.service"])
            if !stop.succeeded, !stop.message.contains("not loaded") { problems.append("systemctl --user stop: \(stop.message)") }
        } else {
            print("no systemd user manager reachable: removing the files only")
        }

        for name in UnitInstaller.allUnitNames {
            remove(paths.unitDirectory.appendingPathComponent(name), &problems)
        }
        // The drop-ins `install --key-store file|credential` wrote; each directory only when nothing else is in it.
        let dropIns = KeyStoreDropIn(unitDirectory: paths.unitDirectory)
        for keyStore in [dropIns.daemonDropIn, dropIns.workerDropIn] where fileManager.fileExists(atPath: keyStore.path) {
            remove(keyStore, &problems)
            rmdir(keyStore.deletingLastPathComponent().path)
        }
        for name in UnitInstaller.binaryNames {
            remove(paths.binDirectory.appendingPathComponent(name), &problems)
        }
        if managerReachable {
            let reload = Systemctl.run(["daemon-reload"])
            if !reload.succeeded { problems.append("systemctl --user daemon-reload: \(reload.message)") }
            _ = Systemctl.run(["reset-failed", "sotto.service", "sotto-push.socket", "sotto-push@*.service"])
        }
        let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].map { $0 + "/sotto" }
        if let runtime, fileManager.fileExists(atPath: runtime) {
            remove(URL(fileURLWithPath: runtime), &problems)
        }

        if removeData {
            if fileManager.fileExists(atPath: paths.groupDirectory.path) {
                remove(paths.groupDirectory, &problems)
            }
            // The data is gone: its key in the Secret Service opens nothing any more.
            let recovery = MasterKeyRecovery(group: GroupDirectory(path: paths.groupDirectory.path),
                                             environment: ProcessInfo.processInfo.environment)
            if let said = recovery.forgetKey() { print(said) }
        } else if fileManager.fileExists(atPath: paths.groupDirectory.path) {
            print("kept your data in \(paths.groupDirectory.path) (conversations and keys); "
                  + "`sotto uninstall --user --remove-data` deletes it")
        }
        // The user wrote it (docs/relay.md) and it may hold a password: kept, but said.
        let relaySettings = paths.home.appendingPathComponent(UnitInstaller.relaySettingsInHome)
        if fileManager.fileExists(atPath: relaySettings.path) {
            print("kept your relay settings in \(relaySettings.path) (they may hold the relay's password); delete it if you no longer need it")
        }
        guard problems.isEmpty else {
            FileHandle.standardError.write(Data(("sotto uninstall: " + problems.joined(separator: "\nsotto uninstall: ") + "\n").utf8))
            throw ExitCode(1)
        }
        print("uninstalled")
    }

    private func remove(_ url: URL, _ problems: inout [String]) {
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        do {
            try FileManager.default.removeItem(at: url)
            print("removed \(url.path)")
        } catch {
            problems.append("cannot remove \(url.path): \(error)")
        }
    }
}
