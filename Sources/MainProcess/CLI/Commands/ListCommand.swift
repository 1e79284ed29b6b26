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
        try client.call("listConversations") { result in
            let conversations = (result as? [String: Any])?["conversations"] as? [[String: Any]] ?? []
            if conversations.isEmpty { return "no conversations (create one with `sotto new`)" }
            return conversations.map { conversation in
                let id = (conversation["id"] as? String ?? "").prefix(12)
                let name = conversation["name"] as? String ?? "(unnamed)"
                let unread = conversation["unread"] as? Int ?? 0
                let state = conversation["state"] as? String ?? ""
                let awake = (conversation["awake"] as? Bool ?? false) ? "awake" : "asleep"
                let expires = ((conversation["expiresAtMs"] as? NSNumber)?.int64Value).map { " explodes \(CLIOutput.time($0))" } ?? ""
                return "\(id)  \(name)  [\(state), \(awake)]  unread \(unread)\(expires)"
            }.joined(separator: "\n")
        }
    }
}
