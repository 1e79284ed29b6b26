import ArgumentParser

/// `sotto new`: a new conversation with its own identity.
struct NewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new", abstract: "Create a conversation, with a fresh identity of its own.")

    @Option(name: .long, help: "The conversation's name.")
    var name: String?

    @OptionGroup var client: ClientOptions

    func run() throws {
        var params: [String: Any] = [:]
        if let name { params["name"] = name }
        try client.call("newConversation", params) { result in
            let object = result as? [String: Any] ?? [:]
            return "created conversation \(object["conversationId"] ?? "?")"
        }
    }
}
