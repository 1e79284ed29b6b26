import ArgumentParser
import Foundation

/// `sotto install --user`: binaries into ~/.local/bin, units into ~/.config/systemd/user,
/// then `systemctl --user daemon-reload` and `enable --now` where a user manager runs.
struct InstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Install the binaries and systemd user units, and enable them.",
        discussion: """
            Copies `sotto` and `sotto-notify` (from beside this binary) to ~/.local/bin,
            writes sotto.service, sotto-push.socket and sotto-push@.service to
            ~/.config/systemd/user with ExecStart= pointing there, and, when a user manager
            is reachable, runs `systemctl --user daemon-reload` and
            `systemctl --user enable --now sotto-push.socket sotto.service`.
            """)

    @Flag(name: .long, help: "Install for the current user (the only mode).")
    var user = false

    @Option(name: .long, help: "Where to put the binaries (default ~/.local/bin).")
    var binDir: String?

    @Option(name: .long, help: "Where to put the unit files (default ~/.config/systemd/user).")
    var unitDir: String?

    @Option(name: .long, help: "Where the shipped unit files are (default: found beside the binary).")
    var unitsDir: String?

    @Flag(name: .long, help: "Write files only; do not call systemctl.")
    var noEnable = false

    func validate() throws {
        guard user else { throw ValidationError("only per-user installation is supported: pass --user") }
    }

    func run() throws {
        let home = FileManager.default.homeDirectoryForCurrentUser
        let environment = ProcessInfo.processInfo.environment
        let binDirectory = URL(fileURLWithPath: binDir ?? home.appendingPathComponent(".local/bin").path)
        let configHome = environment["XDG_CONFIG_HOME"].map { URL(fileURLWithPath: $0) } ?? home.appendingPathComponent(".config")
        let unitDirectory = URL(fileURLWithPath: unitDir ?? configHome.appendingPathComponent("systemd/user").path)
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let binaries = ["sotto", "sotto-notify"].map { here.appendingPathComponent($0) }
        for binary in binaries where !FileManager.default.isExecutableFile(atPath: binary.path) {
            throw ValidationError("\(binary.path) is missing; build first (make build-release)")
        }
        let installer = try UnitInstaller(unitsDirectory: unitsDir)
        for path in try installer.install(binaries: binaries, binDirectory: binDirectory, unitDirectory: unitDirectory) {
            print("wrote \(path)")
        }
        guard !noEnable else { return }
        let reload = runSystemctl(["--user", "daemon-reload"])
        guard reload == 0 else {
            print("no systemd user manager reachable: units written, not enabled. Later: systemctl --user enable --now sotto-push.socket sotto.service")
            return
        }
        if runSystemctl(["--user", "enable", "--now", "sotto-push.socket", "sotto.service"]) == 0 {
            print("enabled and started sotto-push.socket and sotto.service")
        }
    }

    private func runSystemctl(_ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/systemctl")
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
