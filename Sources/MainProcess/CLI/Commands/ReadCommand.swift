import ControlProtocol
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
        try client.call(ReadMessagesParams(conversation: conversation, limit: limit)) { result in
            if result.messages.isEmpty { return "no messages" }
            return result.messages.map { message in
                let sender = CLIOutput.sender(outgoing: message.outgoing, name: message.senderName, inboxId: message.senderInboxId)
                let reference = message.referenceId.map { " ↪ \($0.prefix(8))" } ?? ""
                return "\(CLIOutput.time(message.sentAtMs))  \(sender): \(message.text)\(reference) (\(message.deliveryStatus))  [\(message.id.prefix(8))]"
            }.joined(separator: "\n")
        }
    }
}

