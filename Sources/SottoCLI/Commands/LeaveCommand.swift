import ControlProtocol
import ArgumentParser
import SottoClient

/// `sotto leave`: leave a conversation someone else created (issue #17 item 4): every member
/// is told, then everything of it is deleted on this device.
struct LeaveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "leave", abstract: "Leave a conversation: the members are told, then it is deleted here.",
        discussion: """
            Every member is told with a signed sotto/leave:1.0; members who are away are told when
            they are back (for up to 30 days). The creator cannot leave its own conversation: it
            explodes it instead (exit 65).
            """)

    @Argument(help: "Conversation id, or a unique prefix of it.")
    var conversation: String

    @OptionGroup var client: ClientOptions

    func run() throws {
        try client.call(ClientRequests.leave(conversation: conversation)) { result in
            "left \(result.conversationId): told \(result.members) member(s) (those away when they are back); deleted here"
        }
    }
}
