import ArgumentParser
import FoundationEssentials
import SottoWire

// MARK: The verbs `sotto-daemon` carries
//
// `sotto` is the client: it links what a command that talks to the control socket needs and no
// more (docs/adr/0068). What works on the group directory itself, the keyring or systemd (the
// daemon, installation, the recovery key, repair) is `sotto-daemon`, beside it. These verbs
// hand the process over to it with their arguments, so `sotto daemon`, `sotto install` and the
// others work as documented, `--help` included, and the daemon keeps this process's pid (what
// systemd's Type=notify expects of sotto.service's `ExecStart=… sotto daemon`).

/// Replaces this process with `sotto-daemon VERB ARGUMENTS…`.
///
/// ```swift
/// try DaemonSideVerb.run("install", ["--no-start"])   // returns only by throwing
/// ```
enum DaemonSideVerb {
    static let executableName = "sotto-daemon"

    static func run(_ verb: String, _ arguments: [String]) throws -> Never {
        let reason = SiblingExecutable.replaceProcess(with: SiblingExecutable.path(executableName),
                                                      arguments: [verb] + arguments)
        StandardError.line("sotto \(verb): \(reason)")
        throw ExitCode(1)
    }
}

struct DaemonCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon", abstract: "Run the main process: inboxes, conversations, sending, the control socket.")
    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
    func run() throws { try DaemonSideVerb.run("daemon", arguments) }
}

struct InstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install", abstract: "Install (or upgrade) the binaries and systemd user units, and start them.")
    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
    func run() throws { try DaemonSideVerb.run("install", arguments) }
}

struct UninstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uninstall", abstract: "Stop and remove the systemd user units and the installed binaries.")
    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
    func run() throws { try DaemonSideVerb.run("uninstall", arguments) }
}

struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key", abstract: "Export or import the recovery key (the keystore's master key).")
    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
    func run() throws { try DaemonSideVerb.run("key", arguments) }
}

struct RepairCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair", abstract: "Rebuild a damaged database from every row that can still be read (stop the daemon first).")
    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
    func run() throws { try DaemonSideVerb.run("repair", arguments) }
}
