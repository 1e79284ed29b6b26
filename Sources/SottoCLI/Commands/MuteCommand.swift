import ControlProtocol
import ArgumentParser
import SottoClient

/// `sotto mute`: no desktop notifications for a conversation on this device (`--unmute`
/// takes that back). Its messages are still stored and counted unread; the members are not told.
///
/// ```sh
/// sotto mute 3fa2            # muted 3fa2c81e90b1
/// sotto mute 3fa2 --unmute   # unmuted 3fa2c81e90b1
/// ```
struct MuteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ControlMethodName.muteConversation.rawValue, abstract: "Mute a conversation on this device: no desktop notifications for it.",
        aliases: ["mute"])

    @Argument(help: "Conversation id, or a unique prefix of it.")
    var conversation: String

    @Flag(name: .long, help: "Unmute it instead.")
    var unmute = false

    @OptionGroup var client: ClientOptions

    func run() throws {
        try client.call(ClientRequests.setMuted(!unmute, conversation: conversation)) { result in
            "\(result.muted ? "muted" : "unmuted") \(result.conversationId.prefix(12))"
        }
    }
}
