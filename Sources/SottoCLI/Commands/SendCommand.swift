import ArgumentParser
import ControlProtocol
import FoundationEssentials
import SottoWire
import SottoClient

/// `sotto send`: sign once, seal for each member, deliver through the outbox. With `--file`
/// the daemon reads the file, stores it encrypted and sends its reference
/// (`sendAttachment`, docs/adr/0074); the text, if any, is its caption.
///
/// ```sh
/// sotto send 3fa2 "train at 9?"
/// sotto send 3fa2 --file ~/photo.jpg --text "the view"
/// ```
struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ControlMethodName.sendMessage.rawValue,
        abstract: "Send a text message, or a file (--file, up to 100 MiB), to a conversation.",
        aliases: ["send"])

    @Argument(help: "Conversation id, or a unique prefix of it.")
    var conversation: String

    @Argument(help: "The text to send: at most 65,536 bytes of UTF-8 (with --file: the caption).")
    var text: String?

    @Option(name: .long, help: "The id (or prefix) of the message this replies to.")
    var replyTo: String?

    @Option(name: .long, help: "A file to send (at most 104,857,600 bytes): stored encrypted, then its reference sent.")
    var file: String?

    @Option(name: .long, help: "With --file: the file's name as the members see it (default: the path's last part).")
    var name: String?

    @Option(name: [.customLong("text")], help: "With --file: a caption sent with the file.")
    var caption: String?

    @OptionGroup var client: ClientOptions

    /// Said here, before the daemon is asked: a text far over the limit would not even fit
    /// the control socket's request line, and the daemon's answer would name that instead.
    func validate() throws {
        if file == nil {
            guard name == nil, caption == nil else { throw ValidationError("--name and --text go with --file") }
            guard let text else { throw ValidationError("give the text to send, or --file PATH") }
            guard text.utf8.count <= ContentLimits.maxTextBytes else {
                throw ValidationError("the text is \(text.utf8.count) bytes of UTF-8; at most \(ContentLimits.maxTextBytes) can be sent")
            }
            return
        }
        guard replyTo == nil else { throw ValidationError("--reply-to does not go with --file") }
        guard text == nil || caption == nil else { throw ValidationError("give the caption once: as the text or with --text") }
        if let caption = caption ?? text, caption.utf8.count > ContentLimits.maxTextBytes {
            throw ValidationError("the caption is \(caption.utf8.count) bytes of UTF-8; at most \(ContentLimits.maxTextBytes) can be sent")
        }
        if let name, InertText.containsControls(name) {
            throw ValidationError("the name may not contain control characters")
        }
    }

    func run() throws {
        guard let file else {
            try client.call(ClientRequests.send(conversation: conversation, text: text ?? "", replyTo: replyTo)) { result in
                "sent \(result.messageId) to \(result.recipients) member(s)"
            }
            return
        }
        let request = ClientRequests.sendAttachment(conversation: conversation, path: LocalPath.absolute(file), name: name,
                                                    caption: caption ?? text)
        try client.call(request) { result in
            let line = AttachmentLine.text(name: result.name, size: Int(result.size), state: .available, caption: nil)
            return "sent \(result.messageId) (\(InertText.line(line))) to \(result.recipients) member(s)"
        }
    }
}
