import ControlProtocol
import SottoWire
import ArgumentParser
import SottoClient

/// `sotto invite`: a signed invite code for a conversation this device created.
struct InviteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ControlMethodName.createInvite.rawValue, abstract: "Print an invite code for a conversation you created.",
        discussion: "Share the code; whoever runs `sotto join <code>` asks to join, and this device's daemon accepts it. "
            + "`sotto revoke <conversation> <code>` withdraws it.",
        aliases: ["invite"])

    @Argument(help: "Conversation id, or a unique prefix of it.")
    var conversation: String

    @Option(name: .long, help: "How long the invite stays valid, e.g. 30m, 1h, 7d (default: no expiry).")
    var expires: String?

    @Flag(name: .long, help: "Accept at most one join with this invite.")
    var singleUse = false

    @OptionGroup var client: ClientOptions

    func validate() throws {
        if let expires, DurationParser.milliseconds(expires) == nil {
            throw ValidationError("--expires must be a duration from 1ms to \(DurationParser.maximumText), such as 90s, 30m, 1h or 7d")
        }
    }

    func run() throws {
        let expiresInMs = expires.flatMap(DurationParser.milliseconds)
        try client.call(ClientRequests.invite(conversation: conversation, expiresInMs: expiresInMs, singleUse: singleUse)) { $0.code }
    }
}
