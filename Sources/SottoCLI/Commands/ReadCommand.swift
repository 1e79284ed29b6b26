import ControlProtocol
import ArgumentParser
import FoundationEssentials
import SottoClient

/// `sotto read`: a conversation's messages, oldest first, with delivery status.
struct ReadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ControlMethodName.readMessages.rawValue, abstract: "Show a conversation's latest messages and mark them read.",
        aliases: ["read"])

    @Argument(help: "Conversation id, or a unique prefix of it.")
    var conversation: String

    @Option(name: .long, help: "How many of the latest messages to show.")
    var limit = 50

    @OptionGroup var client: ClientOptions

    func run() throws {
        try client.call(ClientRequests.readPage(conversation: conversation, limit: limit)) { result in
            if result.messages.isEmpty { return "no messages" }
            return result.messages.map { message in
                let sender = CLIOutput.sender(outgoing: message.outgoing, name: message.senderName, inboxId: message.senderInboxId)
                let reference = message.referenceId.map { " ↪ \($0.prefix(8))" } ?? ""
                return "\(CLIOutput.time(message.sentAtMs))  \(sender): \(CLIOutput.text(message.text))\(reference) (\(Self.status(message)))  [\(message.id.prefix(8))]"
            }.joined(separator: "\n")
        }
    }

    /// The message's status, with its members' states when they differ ("pending: 1 relayed,
    /// 1 pending") and why a push waits or failed, shortened ("…; relay nats://…: connect …").
    static func status(_ message: MessageInfo) -> String {
        guard let deliveries = message.deliveries, !deliveries.isEmpty else { return message.deliveryStatus }
        var text = message.deliveryStatus
        let states = ["pending", "failed", "relayed", "sent", "delivered"]
        let counts = states.map { state in (state, deliveries.filter { $0.state == state }.count) }.filter { $0.1 > 0 }
        if counts.count > 1 { text += ": " + counts.map { "\($0.1) \($0.0)" }.joined(separator: ", ") }
        // A failure's text may be the member's device's own words (its ack's message).
        if let why = deliveries.first(where: { $0.state == "pending" || $0.state == "failed" })?.lastError {
            text += "; " + CLIOutput.line(why.count > 80 ? why.prefix(79) + "…" : why)
        }
        return text
    }
}

