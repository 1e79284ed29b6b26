import Glibc
import ArgumentParser
import ControlProtocol
import FoundationEssentials
import SottoClient
import SottoWire

/// `sotto watch`: follow the change feed; with `--since`, replay what was missed first; with
/// `--conversation`, only that conversation's changes.
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ControlMethodName.subscribe.rawValue, abstract: "Print changes as they happen (new messages, reads, joins, explosions).",
        aliases: ["watch"])

    @Option(name: .long, help: "Replay changes after this change-feed sequence number first.")
    var since: Int64?

    @Option(name: .long, help: "Only this conversation's changes (an id or a unique prefix).")
    var conversation: String?

    @OptionGroup var client: ClientOptions

    func run() throws {
        do {
            let connection = try ControlClient.connect(path: client.controlSocketPath)
            let (subscribed, reply) = try connection.callKeepingJSON(SubscribeParams(since: since, conversation: conversation))
            if let gap = subscribed.gap {
                // Never skip changes in silence: say which ones are missing and why.
                let resumed = gap.resumedAtSeq.map { "#\($0)" } ?? "the end"
                let line = "gap: changes after #\(gap.afterSeq) before \(resumed) cannot be read: \(gap.reason); \(gap.remedy)"
                StandardError.line("sotto: \(line)")
                print(client.json ? InertText.json((["gap": reply["gap"] ?? gap.json] as JSONValue).sortedCompactText) : line)
                fflush(nil)
            }
            while let change = try connection.nextChange() {
                print(client.json ? Self.jsonLine(change) : Self.line(change))
                fflush(nil)
            }
        } catch let failure {
            if case .protocolError = failure { return }  // the daemon stopped: end of the feed
            throw CLIOutput.exit(for: failure)
        }
    }

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
