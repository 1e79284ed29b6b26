import ControlProtocol
import DaemonEngine
import DaemonStore
@testable import SottoCLI
@testable import SottoDaemon
import SharedStore
import Testing

/// How `sotto read` turns each member's push into one status (docs/adr/0028): the daemon's
/// summary, and the CLI's text when members differ.
@Suite("Read: delivery status per member")
struct ReadStatusTests {
    private func delivery(_ state: DBOutboxItem.State, _ error: String? = nil) -> OutboxRepository.MemberDelivery {
        OutboxRepository.MemberDelivery(memberInboxId: "m-\(state.rawValue)", state: state, attempts: 1, lastError: error)
    }

    @Test("the summary: pending beats failed beats relayed beats sent beats delivered; no pushes, no summary")
    func summary() {
        #expect(MessageInfo.deliveryStatus(of: [delivery(.sent), delivery(.relayed)]) == "relayed")
        #expect(MessageInfo.deliveryStatus(of: [delivery(.sent)]) == "sent")
        #expect(MessageInfo.deliveryStatus(of: [delivery(.delivered)]) == "delivered")
        #expect(MessageInfo.deliveryStatus(of: [delivery(.delivered), delivery(.sent)]) == "sent", "delivered only when every member said so")
        #expect(MessageInfo.deliveryStatus(of: [delivery(.delivered), delivery(.relayed)]) == "relayed")
        #expect(MessageInfo.deliveryStatus(of: [delivery(.relayed), delivery(.failed)]) == "failed")
        #expect(MessageInfo.deliveryStatus(of: [delivery(.failed), delivery(.pending), delivery(.relayed)]) == "pending")
        #expect(MessageInfo.deliveryStatus(of: []) == nil)
    }

    @Test("the text: one state alone as before, mixed states counted, the first reason shortened to 80 characters")
    func text() {
        func message(_ deliveries: [MessageDelivery]?, status: String) -> MessageInfo {
            MessageInfo(id: "m", conversationId: "c", senderInboxId: "s", sentAtMs: 0, contentType: "text", text: "t",
                        outgoing: true, deliveryStatus: status, deliveries: deliveries)
        }
        #expect(ReadCommand.status(message(nil, status: "sent")) == "sent")
        #expect(ReadCommand.status(message([MessageDelivery(member: "a", state: "relayed", attempts: 1)], status: "relayed")) == "relayed")
        let long = String(repeating: "x", count: 200)
        let mixed = message([MessageDelivery(member: "a", state: "relayed", attempts: 1),
                             MessageDelivery(member: "b", state: "pending", attempts: 4, lastError: long)], status: "pending")
        #expect(ReadCommand.status(mixed) == "pending: 1 pending, 1 relayed; " + String(repeating: "x", count: 79) + "…")
        let failed = message([MessageDelivery(member: "a", state: "failed", attempts: 1, lastError: "bad_signature")], status: "failed")
        #expect(ReadCommand.status(failed) == "failed; bad_signature")
    }
}
