import ControlProtocol
import ArgumentParser
import SottoClient

/// `sotto new`: a new conversation with its own identity.
struct NewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ControlMethodName.newConversation.rawValue, abstract: "Create a conversation, with a fresh identity of its own.",
        aliases: ["new"])

    @Option(name: .long, help: "The conversation's name.")
    var name: String?

    @Option(name: .long, help: "The name the members see for you (default: your login name).")
    var profileName: String?

    @OptionGroup var client: ClientOptions

    func run() throws {
        try client.call(ClientRequests.create(name: name, profileName: profileName)) { result in
            "created conversation \(result.conversationId)"
        }
    }
}
