import ControlProtocol
import ArgumentParser
import SottoClient

/// `sotto remove`: the creator removes a member (issue #17 item 4).
struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ControlMethodName.removeMember.rawValue, abstract: "Remove a member from a conversation you created.",
        discussion: """
            Every member is told with a signed sotto/remove:1.0; the removed device deletes the
            conversation when it gets it, and nothing sent afterwards is sealed to it.
            """,
        aliases: ["remove"])

    @Argument(help: "Conversation id, or a unique prefix of it.")
    var conversation: String

    @Argument(help: "The member's profile name, or its inbox id or a unique prefix of it.")
    var member: String

    @OptionGroup var client: ClientOptions

    func run() throws {
        try client.call(ClientRequests.remove(member: member, conversation: conversation)) { result in
            "removed \(result.inboxId.prefix(12)) from \(result.conversationId.prefix(12)): told \(result.members) member(s)"
        }
    }
}
