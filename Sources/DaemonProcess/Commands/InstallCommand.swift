import ArgumentParser
import Foundation
import SottoClient
import SottoDaemon

/// `sotto install --user`: binaries into ~/.local/bin, units into ~/.config/systemd/user, the
/// group directory ~/.local/share/sotto, then `systemctl --user` enables and (re)starts
/// them and checks that the daemon is active. Running the installed `sotto install --user`
/// again (or a newer build's) upgrades in place.
struct InstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Install (or upgrade) the binaries and systemd user units, and start them.",
        discussion: """
            Copies `sotto`, `sotto-daemon`, `sotto-notify` and `sotto-relayd` (from beside
            this binary) to ~/.local/bin, writes sotto.service, sotto-push.socket,
            sotto-push@.service and sotto-relayd.service to ~/.config/systemd/user with
            ExecStart= pointing there, creates ~/.local/share/sotto (0700) when missing,
            then runs `systemctl --user daemon-reload`, `enable` and `restart` for
            sotto-push.socket and sotto.service, checks that sotto.service is active, and
            restarts sotto-relayd.service if it runs (a device on a relay; enabling it is
            yours, see docs/relay.md). ~ is $HOME.

            Exit status: 0 installed and running (or files written with --no-enable),
            1 a systemctl step failed or the daemon did not become active (systemctl's
            error and the daemon's own reason are printed), 64 usage error. A daemon that
            is up but waits for the master key (a locked keyring, no default keyring) is
            active: exit 0, and the reason it waits is printed.
            """)

    @Flag(name: .long, help: "Install for the current user (the only mode).")
    var user = false

    @Option(name: .long, help: "Where to put the binaries (default ~/.local/bin).")
    var binDir: String?

    @Option(name: .long, help: "Where to put the unit files (default $XDG_CONFIG_HOME/systemd/user or ~/.config/systemd/user).")
    var unitDir: String?

    @Option(name: .long, help: "Read the unit files from this folder instead of the ones built into sotto.")
    var unitsDir: String?

    @Flag(name: .long, help: "Write files only; do not call systemctl.")
    var noEnable = false

    @Option(name: .long, help: ArgumentHelp(
        "Where the daemon keeps the master key: keyring (the Secret Service, the default), credential "
            + "(the systemd credential sotto-keystore-key of your service manager, for a headless machine: "
            + "docs/adr/0054) or file (keystore/master.key; sotto status then says so). "
            + "Kept across upgrades until given again.",
        valueName: "keyring|credential|file"))
    var keyStore: String?

    func validate() throws {
        guard user else { throw ValidationError("only per-user installation is supported: pass --user") }
        if let keyStore, !KeyStoreDropIn.modes.contains(keyStore) {
            throw ValidationError("--key-store \(keyStore): expected keyring, credential or file")
        }
    }

    func run() throws {
        let paths = InstallPaths(binDir: binDir, unitDir: unitDir)
        let here = UnitInstaller.executableDirectory()
        let binaries = UnitInstaller.binaryNames.map { here.appendingPathComponent($0) }
        for binary in binaries where !FileManager.default.isExecutableFile(atPath: binary.path) {
            throw ValidationError("\(binary.path) is missing; build first (make build-release)")
        }
        let installer = UnitInstaller(unitsDirectory: unitsDir)
        for path in try installer.install(binaries: binaries, binDirectory: paths.binDirectory,
                                          unitDirectory: paths.unitDirectory, groupDirectory: paths.groupDirectory) {
            print("wrote \(path)")
        }
        if let keyStore {
            print(try KeyStoreDropIn(unitDirectory: paths.unitDirectory).apply(keyStore))
        }
        guard !noEnable else { return }

        let reload = Systemctl.run(["daemon-reload"])
        guard reload.succeeded else {
            throw fail("""
                no systemd user manager reachable (systemctl --user daemon-reload: \(reload.message)).
                The files are written but nothing is enabled; once a user manager runs:
                  systemctl --user daemon-reload && systemctl --user enable --now sotto-push.socket sotto.service
                """)
        }
        let units = ["sotto-push.socket", "sotto.service"]
        // reset-failed: a unit that hit its start limit before (an old, broken install) would
        // refuse the restart below.
        _ = Systemctl.run(["reset-failed", "sotto.service"])
        for step in [["enable"] + units, ["restart"] + units] {
            let result = Systemctl.run(step)
            guard result.succeeded else {
                throw fail("systemctl --user \(step.joined(separator: " ")) failed: \(result.message)\n"
                     + Self.daemonSays() + "See: systemctl --user status sotto.service; journalctl --user -u sotto.service")
            }
        }
        // Type=notify: restart returned after READY=1. Active now means it came up.
        let state = Systemctl.run(["is-active", "sotto.service"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard state == "active" else {
            throw fail("sotto.service is \(state.isEmpty ? "not active" : state) after the restart.\n"
                 + Self.daemonSays() + "See: systemctl --user status sotto.service; journalctl --user -u sotto.service")
        }
        // A running relayd would keep the replaced (deleted) binary and the old unit.
        let relayd = Systemctl.run(["try-restart"] + UnitInstaller.restartedIfRunning)
        guard relayd.succeeded else {
            throw fail("systemctl --user try-restart \(UnitInstaller.restartedIfRunning.joined(separator: " ")) failed: "
                 + "\(relayd.message)\nSee: journalctl --user -u sotto-relayd.service")
        }
        let relaydActive = Systemctl.run(["is-active", "sotto-relayd.service"]).stdout.hasPrefix("active")
        print("enabled and started sotto-push.socket and sotto.service (active)"
              + (relaydActive ? "; restarted sotto-relayd.service" : ""))
        // Up, but serving nothing until the user acts (a locked keyring, no default keyring).
        if let waiting = DaemonReason.waiting() { print("sotto.service is \(waiting)") }
    }

    /// "The daemon says: …\n" with its own reason, or nothing when there is none to read.
    private static func daemonSays() -> String {
        DaemonReason.read().map { "The daemon says: \($0)\n" } ?? ""
    }

    /// Prints the reason and returns exit status 1 to throw.
    private func fail(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("sotto install: \(message)\n".utf8))
        return ExitCode(1)
    }
}

/// Where `install` and `uninstall` put things, from the options, `$HOME` and `$XDG_CONFIG_HOME`.
struct InstallPaths {
    let home: URL
    let binDirectory: URL
    let unitDirectory: URL
    let groupDirectory: URL

    init(binDir: String?, unitDir: String?, environment: [String: String] = ProcessInfo.processInfo.environment) {
        home = UnitInstaller.home(environment: environment)
        binDirectory = URL(fileURLWithPath: binDir ?? home.appendingPathComponent(".local/bin").path)
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : nil }
            ?? home.appendingPathComponent(".config")
        unitDirectory = URL(fileURLWithPath: unitDir ?? configHome.appendingPathComponent("systemd/user").path)
        groupDirectory = home.appendingPathComponent(UnitInstaller.groupDirectoryInHome)
    }
}
