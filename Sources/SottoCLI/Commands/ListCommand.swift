import ControlProtocol
import ArgumentParser
import FoundationEssentials
import SottoClient

/// `sotto ls`: conversations, most recently active first.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ControlMethodName.listConversations.rawValue, abstract: "List conversations, most recently active first.",
        aliases: ["ls"])

    @OptionGroup var client: ClientOptions

    func run() throws {
        try client.call(ClientRequests.listConversations()) { result in
            if result.conversations.isEmpty && result.refusedJoins.isEmpty {
                return "no conversations (create one with `sotto new`)"
            }
            // The reason's words come from the closed set (RefusedJoinInfo.reasons), never a peer's bytes.
            let refused = result.refusedJoins.map { join in
                "\(join.id.prefix(12))  [refused: \(CLIOutput.line(join.reason))]  \(CLIOutput.line(join.reasonText)), at \(CLIOutput.time(join.refusedAtMs))  (`sotto dismiss \(join.id.prefix(12))`)"
            }
            return (refused + result.conversations.map { conversation in
                let awake = conversation.awake ? "awake" : "asleep"
                let muted = conversation.muted ? ", muted" : ""
                let expires = conversation.expiresAtMs.map { " explodes \(CLIOutput.time($0))" } ?? ""
                return "\(conversation.id.prefix(12))  \(conversation.name.map(CLIOutput.line) ?? "(unnamed)")  [\(conversation.state), \(awake)\(muted)]  unread \(conversation.unread)\(expires)"
            }).joined(separator: "\n")
        }
    }
}
