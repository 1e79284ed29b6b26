import ArgumentParser
import Foundation
import SottoClient
import SottoDaemon

/// `sotto read`: a conversation's messages, oldest first, with delivery status.
struct ReadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read", abstract: "Show a conversation's latest messages and mark them read.")

    @Argument(help: "Conversation id, or a unique prefix of it.")
    var conversation: String

    @Option(name: .long, help: "How many of the latest messages to show.")
    var limit = 50

    @OptionGroup var client: ClientOptions

    func run() throws {
        try client.call("readMessages", ["conversation": conversation, "limit": limit]) { result in
            let messages = (result as? [String: Any])?["messages"] as? [[String: Any]] ?? []
            if messages.isEmpty { return "no messages" }
            return messages.map { message in
                let sender = CLIOutput.sender(message)
                let time = CLIOutput.time((message["sentAtMs"] as? NSNumber)?.int64Value)
                let status = (message["deliveryStatus"] as? String).map { " (\($0))" } ?? ""
                let reference = (message["referenceId"] as? String).map { " ↪ \($0.prefix(8))" } ?? ""
                return "\(time)  \(sender): \(message["text"] as? String ?? "")\(reference)\(status)  [\((message["id"] as? String ?? "").prefix(8))]"
            }.joined(separator: "\n")
        }
    }
}

