import ArgumentParser
import Foundation
import SottoClient
import SottoDaemon

/// `sotto daemon`: the main process. Under systemd it is sotto.service (Type=notify); it
/// also runs in the foreground in a terminal.
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the main process: inboxes, conversations, sending, the control socket.",
        discussion: "Normally started by systemd (`systemctl --user start sotto`). Stops cleanly on SIGTERM or SIGINT.")

    @Option(name: .long, help: "Group directory (default: $SOTTO_GROUP_DIR, $XDG_DATA_HOME/sotto or ~/.local/share/sotto).")
    var groupDir: String?

    @Option(name: .long, help: "How many inboxes may be awake at once (the source app's Inbox Lifecycle Management).")
    var capacity = 20

    func validate() throws {
        guard (1...10_000).contains(capacity) else { throw ValidationError("--capacity must be between 1 and 10000") }
    }

    func run() async throws {
        let status = await DaemonRunner(groupDirectory: groupDir, capacity: capacity).run()
        if status != 0 { throw ExitCode(status) }
    }
}
