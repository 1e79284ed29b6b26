import Glibc
import ArgumentParser
import ControlProtocol
import FoundationEssentials
import SottoClient
import SottoWire

/// `sotto`: the command-line client of the daemon. The verbs that are not the control
/// socket's (daemon, install, uninstall, key, repair) hand the process to `sotto-daemon`
/// beside it (docs/adr/0068), so this binary links only what a client needs.
public struct SottoCommand: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "sotto",
        abstract: "A privacy-first messenger for Linux: daemon and command-line client.",
        discussion: """
            `sotto daemon` runs the main process (normally as the systemd user service
            sotto.service). Every other subcommand talks to it over its control socket,
            $XDG_RUNTIME_DIR/sotto/control.sock.

            Exit status: 0 success, 64 usage error, 65 refused (bad input or not allowed),
            69 the daemon is not running, 70 internal error.

            Environment: SOTTO_GROUP_DIR (data, default ~/.local/share/sotto),
            SOTTO_RUNTIME_DIR (sockets, default $XDG_RUNTIME_DIR/sotto).
            """,
        version: SottoVersion.string,
        subcommands: [
            DaemonCommand.self, StatusCommand.self, ListCommand.self, NewCommand.self,
            ReadCommand.self, SendCommand.self, SaveCommand.self, ReactCommand.self, MuteCommand.self, NotificationsCommand.self, ReceiptsCommand.self,
            InviteCommand.self, RevokeCommand.self, JoinCommand.self, DismissCommand.self, ExplodeCommand.self, LeaveCommand.self, RemoveCommand.self, RenameCommand.self,
            WatchCommand.self, ChatCommand.self, InstallCommand.self, UninstallCommand.self, RepairCommand.self, KeyCommand.self,
            RelaydCommand.self,
        ])
}

/// Options every client subcommand takes.
struct ClientOptions: ParsableArguments {
    @Flag(name: .long, help: "Print the daemon's reply as JSON.")
    var json = false

    @Option(name: .long, help: "Runtime directory holding control.sock (default: $SOTTO_RUNTIME_DIR or $XDG_RUNTIME_DIR/sotto).")
    var runtimeDir: String?

    var controlSocketPath: String {
        (runtimeDir.map(RuntimeDirectory.init(path:))
            ?? RuntimeDirectory.resolve(environment: ProcessInfo.processInfo.environment)).controlSocketPath
    }

    /// Makes one of the library's requests (`ClientRequests`, what the chat app makes too) and
    /// prints the result, as JSON with `--json` (the daemon's reply as it came), else with
    /// `render`. A command waits for its answer, on its one thread (docs/adr/0071).
    func call<P>(_ request: ClientRequest<P>, render: (P.Result) -> String) throws {
        do throws(ControlClient.Failure) {
            let (result, reply) = try RequestChannel(socketPath: controlSocketPath).callKeepingJSON(request)
            print(json ? CLIOutput.json(reply) : render(result))
        } catch let failure {
            throw CLIOutput.exit(for: failure)
        }
    }
}

/// How the CLI prints results and maps failures to exit codes.
enum CLIOutput {
    /// Indented JSON with sorted keys, as `JSONSerialization` writes it (the CLI's `--json`
    /// output has always been this; scripts may compare it), with what it leaves raw and a
    /// terminal would obey (C1, DEL, bidirectional controls) escaped: the same text decoded.
    static func json(_ value: JSONValue) -> String { InertText.json(value.sortedPrettyText) }

    static func exit(for failure: ControlClient.Failure) -> Error {
        // The daemon's message may quote what a peer sent (its error text, a name).
        StandardError.line("sotto: \(InertText.line(String(describing: failure)))")
        switch failure {
        case .daemonNotRunning: return ExitCode(69)
        case .permissionDenied: return ExitCode(65)
        case .rpc(let error) where [.invalidParams, .notFound, .refused].contains(error.code): return ExitCode(65)
        case .rpc, .protocolError, .timedOut: return ExitCode(70)
        }
    }

    /// Who sent a message, as a messenger shows it: "me", the sender's profile name (inert),
    /// or a short inbox id only when the sender has no name.
    static func sender(outgoing: Bool?, name: String?, inboxId: String?) -> String {
        if outgoing ?? false { return "me" }
        if let name, !name.isEmpty { return InertText.line(name) }
        return String((inboxId ?? "?").prefix(8))
    }

    // MARK: What other devices sent or named (docs/adr/0062)

    /// What starts each line of a multi-line text after its first in `sotto read`: no line
    /// of a text can pass for a message line of its own.
    static let continuation = "  ┆ "

    /// A text, reply or reaction as `sotto read` shows it: its line breaks kept, each
    /// continued line marked, every control and bidirectional control shown, not obeyed.
    static func text(_ text: String) -> String {
        InertText.lines(text, continuation: continuation)
    }

    /// A name or a text on one line (`sotto watch`, `sotto ls`, error text).
    static func line(_ text: String) -> String {
        InertText.line(text)
    }

    static func time(_ ms: Int64?) -> String {
        ms.map(LocalTime.minutes) ?? "-"
    }
}
