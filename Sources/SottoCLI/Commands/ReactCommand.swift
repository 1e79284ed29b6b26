import ControlProtocol
import ArgumentParser
import SottoClient

/// `sotto react`: add (or with `--remove` take back) a reaction to a message.
struct ReactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "react", abstract: "React to a message with an emoji.")

    @Argument(help: "Conversation id, or a unique prefix of it.")
    var conversation: String

    @Argument(help: "The message id, or a unique prefix of it.")
    var message: String

    @Argument(help: "The reaction, e.g. 👍.")
    var emoji: String

    @Flag(name: .long, help: "Remove this reaction instead of adding it.")
    var remove = false

    @OptionGroup var client: ClientOptions

    func run() throws {
        try client.call(ClientRequests.react(conversation: conversation, message: message, emoji: emoji, remove: remove)) { result in
            "\(remove ? "removed" : "sent") reaction \(result.messageId) to \(result.recipients) member(s)"
        }
    }
}
