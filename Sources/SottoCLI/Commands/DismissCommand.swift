import ControlProtocol
import ArgumentParser
import SottoClient

/// `sotto dismiss`: forgets a join the creator refused, which `sotto ls` shows as
/// `refused: <reason>` until then (docs/protocol/join-refusal.md).
struct DismissCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ControlMethodName.dismissRefusal.rawValue, abstract: "Forget a refused join that `sotto ls` shows.",
        discussion: """
            A join the creator refused is deleted with its identity as soon as the refusal comes;
            `sotto ls` keeps saying "refused: <reason>" until you dismiss it. Ask the creator
            for a new invite to try again.
            """,
        aliases: ["dismiss"])

    @Argument(help: "The refused conversation's id, or a unique prefix of it.")
    var conversation: String

    @OptionGroup var client: ClientOptions

    func run() throws {
        try client.call(ClientRequests.dismissRefusal(conversation: conversation)) { result in
            "dismissed the refused join of \(result.conversationId)"
        }
    }
}
