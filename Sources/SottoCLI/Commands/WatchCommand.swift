import Glibc
import ArgumentParser
import ControlProtocol
import FoundationEssentials
import SottoClient
import SottoWire

/// `sotto watch`: follow the change feed; with `--since`, replay what was missed first; with
/// `--conversation`, only that conversation's changes. It follows through the library's
/// `ChangeFeedSession`, as the chat app does: when the daemon goes away (a restart, an
/// upgrade, a crash) it says so on stderr, reconnects and goes on after the last change it
/// printed, with none missed and none printed twice. It ends on Ctrl-C (or any signal), on
/// the daemon's refusal (exit 65), or when there is no daemon to start with (exit 69);
/// docs/adr/0071.
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ControlMethodName.subscribe.rawValue, abstract: "Print changes as they happen (new messages, reads, joins, explosions).",
        discussion: """
            Runs until interrupted (Ctrl-C). When the daemon stops or restarts, watch says so on \
            stderr and keeps reconnecting; once the daemon is back it goes on after the last change \
            it printed, with none missed and none twice.
            """,
        aliases: ["watch"])

    @Option(name: .long, help: "Replay changes after this change-feed sequence number first.")
    var since: Int64?
    @Option(name: .long, help: "Only this conversation's changes (an id or a unique prefix).")
    var conversation: String?
    @OptionGroup var client: ClientOptions

    func run() throws {
        let output = WatchOutput(json: client.json, since: since)
        let feed = ChangeFeedSession(socketPath: client.controlSocketPath, conversation: conversation, since: since) { event in
            output.show(event)
        }
        // Returns only when the feed ends for good: nothing stops it from this process.
        if let failure = feed.follow(endingIfNeverConnected: true) {
            throw CLIOutput.exit(for: failure)
        }
    }

    // MARK: Lines

    /// `#12 messageInserted conversation 3f2a…  alice: hello`: one line whatever the text
    /// holds (its line breaks shown as `␊`, docs/adr/0062).
    static func line(_ change: ChangeNotification) -> String {
        let conversation = change.conversationId.map { " conversation \($0.prefix(12))" } ?? ""
        var line = "#\(change.seq) \(change.kind)\(conversation)"
        if let text = change.text {
            line += "  \(CLIOutput.sender(outgoing: change.outgoing, name: change.senderName, inboxId: change.senderInboxId)): \(CLIOutput.line(text))"
        }
        return line
    }

    /// One line per change. Compact JSON, not pretty JSON with its spaces taken out: that
    /// took the double spaces out of a message's text too.
    static func jsonLine(_ change: ChangeNotification) -> String {
        InertText.json(change.json.sortedCompactText)
    }
}
