import ControlProtocol
import ArgumentParser
import SottoClient

/// `sotto join`: ask to join a conversation with an invite code.
struct JoinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ControlMethodName.joinConversation.rawValue, abstract: "Join a conversation with an invite code.",
        discussion: "The conversation stays pending until its creator's daemon accepts the request.",
        aliases: ["join"])

    @Argument(help: "The invite code (sotto1:…).")
    var code: String

    @Option(name: .long, help: "The name the other members see (default: your login name).")
    var profileName: String?

    @OptionGroup var client: ClientOptions

    func run() throws {
        try client.call(ClientRequests.join(code: code, profileName: profileName)) { result in
            "asked to join \(result.conversationId) (\(result.state))"
        }
    }
}
