import ArgumentParser
import Foundation
import SottoClient
import SottoDaemon

/// `sotto watch`: follow the change feed; with `--since`, replay what was missed first.
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch", abstract: "Print changes as they happen (new messages, reads, joins, explosions).")

    @Option(name: .long, help: "Replay changes after this change-feed sequence number first.")
    var since: Int64?

    @OptionGroup var client: ClientOptions

    func run() throws {
        do {
            let connection = try ControlClient.connect(path: client.controlSocketPath)
            var params: [String: Any] = [:]
            if let since { params["since"] = since }
            let subscribed = try connection.call("subscribe", params)
            if let gap = (subscribed as? [String: Any])?["gap"] as? [String: Any] {
                // Never skip changes in silence: say which ones are missing and why.
                let after = gap["afterSeq"] ?? "?"
                let resumed = gap["resumedAtSeq"].map { "#\($0)" } ?? "the end"
                let line = "gap: changes after #\(after) before \(resumed) cannot be read: \(gap["reason"] ?? "?"); \(gap["remedy"] ?? "")"
                FileHandle.standardError.write(Data("sotto: \(line)\n".utf8))
                print(client.json ? CLIOutput.json(["gap": gap]).replacingOccurrences(of: "\n", with: "") : line)
                fflush(nil)
            }
            try connection.stream { event in
                if client.json {
                    print(CLIOutput.json(event).replacingOccurrences(of: "\n", with: "").replacingOccurrences(of: "  ", with: ""))
                } else {
                    let conversation = (event["conversationId"] as? String).map { " conversation \($0.prefix(12))" } ?? ""
                    var line = "#\(event["seq"] ?? "?") \(event["kind"] ?? "?")\(conversation)"
                    if let text = event["text"] as? String {
                        line += "  \(CLIOutput.sender(event)): \(text)"
                    }
                    print(line)
                }
                fflush(nil)
            }
        } catch let failure {
            if case .protocolError = failure { return }  // the daemon stopped: end of the feed
            throw CLIOutput.exit(for: failure)
        }
    }
}
