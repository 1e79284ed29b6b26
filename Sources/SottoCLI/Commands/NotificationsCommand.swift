import ControlProtocol
import ArgumentParser
import SottoClient

/// `sotto notifications`: what desktop notifications show, for the device or one conversation.
struct NotificationsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ControlMethodName.notificationPreview.rawValue, abstract: "Show or set what desktop notifications show.",
        discussion: """
            full: the name and the text (the default); name: who wrote, not what; none: only "New message", \
            also on a locked screen. Without a conversation it is the device's setting; a conversation's own \
            setting overrides it until `--preview default`.
            """,
        aliases: ["notifications"])

    @Argument(help: "Conversation id, or a unique prefix of it (default: the device).")
    var conversation: String?

    @Option(name: .long, help: "full, name, none, or default (a conversation follows the device again).")
    var preview: String?

    @OptionGroup var client: ClientOptions

    func validate() throws {
        if let preview, !NotificationPreviewParams.values.contains(preview) {
            throw ValidationError("--preview must be one of \(NotificationPreviewParams.values.joined(separator: ", "))")
        }
        if preview == "default", conversation == nil {
            throw ValidationError("--preview default applies to a conversation; the device's default is full")
        }
    }

    func run() throws {
        try client.call(ClientRequests.notificationPreview(conversation: conversation, preview: preview)) { result in
            guard let id = result.conversationId else { return "notifications show: \(result.device) (device)" }
            let source = result.conversationPreview == nil ? "the device's setting" : "this conversation's setting"
            return "notifications of \(id.prefix(12)) show: \(result.effective) (\(source); device: \(result.device))"
        }
    }
}
