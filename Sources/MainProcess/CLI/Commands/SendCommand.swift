import ControlProtocol
import ArgumentParser

/// `sotto send`: sign once, seal for each member, deliver through the outbox.
struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send", abstract: "Send a text message to a conversation.")

    @Argument(help: "Conversation id, or a unique prefix of it.")
    var conversation: String

    @Argument(help: "The text to send.")
    var text: String

    @Option(name: .long, help: "The id (or prefix) of the message this replies to.")
    var replyTo: String?

    @OptionGroup var client: ClientOptions

    func run() throws {
        try client.call(SendMessageParams(conversation: conversation, text: text, replyTo: replyTo)) { result in
            "sent \(result.messageId) to \(result.recipients) member(s)"
        }
    }
}
