import ArgumentParser
import ControlProtocol
import SottoWire
import SottoClient

/// `sotto send`: sign once, seal for each member, deliver through the outbox.
struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ControlMethodName.sendMessage.rawValue, abstract: "Send a text message to a conversation.",
        aliases: ["send"])

    @Argument(help: "Conversation id, or a unique prefix of it.")
    var conversation: String

    @Argument(help: "The text to send: at most 65,536 bytes of UTF-8.")
    var text: String

    @Option(name: .long, help: "The id (or prefix) of the message this replies to.")
    var replyTo: String?

    @OptionGroup var client: ClientOptions

    /// Said here, before the daemon is asked: a text far over the limit would not even fit
    /// the control socket's request line, and the daemon's answer would name that instead.
    func validate() throws {
        guard text.utf8.count <= ContentLimits.maxTextBytes else {
            throw ValidationError("the text is \(text.utf8.count) bytes of UTF-8; at most \(ContentLimits.maxTextBytes) can be sent")
        }
    }

    func run() throws {
        try client.call(ClientRequests.send(conversation: conversation, text: text, replyTo: replyTo)) { result in
            "sent \(result.messageId) to \(result.recipients) member(s)"
        }
    }
}
