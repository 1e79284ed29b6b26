import ControlProtocol
import ArgumentParser
import SottoClient

/// `sotto rename`: change your own profile name in a conversation (issue #17 item 3).
struct RenameCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename", abstract: "Change your profile name in a conversation.",
        discussion: """
            A member's device asks the conversation's creator (a signed sotto/rename:1.0), whose
            device tells every member with a roster delta; on the creator's device the delta goes
            out at once. 1 to 100 bytes, no control characters.
            """)

    @Argument(help: "Conversation id, or a unique prefix of it.")
    var conversation: String

    @Argument(help: "The new profile name.")
    var name: String

    @OptionGroup var client: ClientOptions

    func run() throws {
        try client.call(ClientRequests.rename(conversation: conversation, name: name)) { result in
            "renamed to \(result.profileName) in \(result.conversationId.prefix(12)): told \(result.members) member(s)"
        }
    }
}
