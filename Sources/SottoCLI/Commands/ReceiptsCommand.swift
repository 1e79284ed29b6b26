import ControlProtocol
import ArgumentParser
import SottoClient

/// `sotto receipts`: whether this device tells a conversation's senders that their messages
/// arrived (delivery receipts, on by default; docs/protocol/receipts.md). Without a flag it
/// only shows the setting.
///
/// ```sh
/// sotto receipts 3fa2          # receipts on for 3fa2c81e90b1
/// sotto receipts 3fa2 --off    # receipts off for 3fa2c81e90b1
/// ```
struct ReceiptsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipts", abstract: "Show, or turn on or off, delivery receipts for a conversation on this device.")

    @Argument(help: "Conversation id, or a unique prefix of it.")
    var conversation: String

    @Flag(name: .long, help: "Send delivery receipts for it (the default).")
    var on = false

    @Flag(name: .long, help: "Send no delivery receipts for it.")
    var off = false

    @OptionGroup var client: ClientOptions

    func validate() throws {
        if on && off { throw ValidationError("--on and --off cannot be used together") }
    }

    func run() throws {
        let enabled: Bool? = on ? true : (off ? false : nil)
        try client.call(ClientRequests.receipts(conversation: conversation, enabled: enabled)) { result in
            "receipts \(result.enabled ? "on" : "off") for \(result.conversationId.prefix(12))"
        }
    }
}
