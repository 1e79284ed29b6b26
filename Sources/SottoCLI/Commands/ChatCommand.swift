import Glibc
import ArgumentParser
import ControlProtocol
import FoundationEssentials
import SottoClient
import SottoWire

/// `sotto chat [CONVERSATION]`: the terminal app. The conversation list on the left, the open
/// conversation on the right, a composer at the bottom (docs/adr/0064).
struct ChatCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat", abstract: "Read and answer conversations in a terminal app (Enter sends, Ctrl-C quits).",
        discussion: """
            Keys: Enter sends, Alt+Enter adds a line, Up/Down or Tab/Shift+Tab switch conversations,
            PageUp/PageDown scroll the history, Ctrl-P/Ctrl-N select a message, Ctrl-R replies to it,
            Ctrl-T reacts to it (the composer's emoji, else 👍), Ctrl-F searches the open conversation,
            Ctrl-O composes in $EDITOR, Esc cancels, Ctrl-C quits. Commands in the composer: /new NAME,
            /invite, /join CODE, /mute, /unmute, /leave, /remove MEMBER, /explode, /help; leave, remove
            and explode ask you to type the name first. NO_COLOR turns attributes off. While a conversation is open here, it raises no desktop notification.
            """)

    @Argument(help: "Open this conversation (an id or a unique prefix of it); default: the most recently active one.")
    var conversation: String?

    @OptionGroup var client: ClientOptions

    func run() throws {
        // The daemon must answer before the screen is taken; the list is read here only to
        // resolve CONVERSATION (the app loads its own once its feed is connected).
        var conversations: [ConversationInfo] = []
        do throws(ControlClient.Failure) {
            if conversation != nil {
                conversations = try RequestChannel(socketPath: client.controlSocketPath).call(ClientRequests.listConversations()).conversations
            } else {
                _ = try ControlClient.connect(path: client.controlSocketPath)   // listening, that is all
            }
        } catch let failure {
            throw CLIOutput.exit(for: failure)
        }
        var open: String?
        if let conversation {
            let matches = conversations.filter { $0.id == conversation } .isEmpty
                ? conversations.filter { $0.id.hasPrefix(conversation.lowercased()) }
                : conversations.filter { $0.id == conversation }
            guard matches.count == 1 else {
                let why = matches.isEmpty ? "no conversation '\(InertText.line(conversation))'"
                                          : "'\(InertText.line(conversation))' matches more than one conversation"
                StandardError.line("sotto: \(why)")
                throw ExitCode(65)
            }
            open = matches[0].id
        }
        let status: Int32
        do {
            status = try ChatApp(socketPath: client.controlSocketPath, initial: conversations, open: open).run()
        } catch {
            StandardError.line("sotto: \(error)")
            throw ExitCode(70)
        }
        if status != 0 { throw ExitCode(status) }
    }
}
