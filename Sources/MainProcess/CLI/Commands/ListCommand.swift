import ControlProtocol
import ArgumentParser
import Foundation
import SottoClient
import SottoDaemon

/// `sotto ls`: conversations, most recently active first.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls", abstract: "List conversations, most recently active first.")

    @OptionGroup var client: ClientOptions

    func run() throws {
        try client.call(ListConversationsParams()) { result in
            if result.conversations.isEmpty { return "no conversations (create one with `sotto new`)" }
            return result.conversations.map { conversation in
                let awake = conversation.awake ? "awake" : "asleep"
                let muted = conversation.muted ? ", muted" : ""
                let expires = conversation.expiresAtMs.map { " explodes \(CLIOutput.time($0))" } ?? ""
                return "\(conversation.id.prefix(12))  \(conversation.name.map(CLIOutput.line) ?? "(unnamed)")  [\(conversation.state), \(awake)\(muted)]  unread \(conversation.unread)\(expires)"
            }.joined(separator: "\n")
        }
    }
}
