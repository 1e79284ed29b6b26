import ControlProtocol
import ArgumentParser
import SottoClient

/// `sotto revoke`: withdraw an invite of a conversation you created.
struct RevokeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ControlMethodName.revokeInvite.rawValue, abstract: "Revoke an invite of a conversation you created.",
        discussion: "A join request decided after this is refused, whenever it was sent. Members who joined stay.",
        aliases: ["revoke"])

    @Argument(help: "Conversation id, or a unique prefix of it.")
    var conversation: String

    @Argument(help: "The invite code (sotto1:…), or the invite's id or a unique prefix of it (`sotto invite --json` shows it).")
    var invite: String

    @OptionGroup var client: ClientOptions

    func run() throws {
        try client.call(ClientRequests.revokeInvite(conversation: conversation, invite: invite)) { result in
            result.revokedNow ? "revoked invite \(result.inviteId)" : "invite \(result.inviteId) was already revoked"
        }
    }
}
