import ControlProtocol
import DaemonCore
import DaemonStore
import SharedStore

// A message as the control API's wire type: one initializer, used by `readMessages` and by
// the `change` notification (docs/adr/0070), so both describe a message alike. The daemon app
// makes it, where the engine's values meet the control socket.

extension MessageInfo {
    /// A message with its sender's profile name when it has one (incoming only: `sotto read`
    /// shows "me" for outgoing, a short inbox id only without a name), and for an outgoing one
    /// its members' pushes, which also decide its status (`deliveryStatus(of:)`).
    init(_ message: TimelineMessage, senderName: String?, deliveries: [OutboxRepository.MemberDelivery]? = nil) {
        let status = deliveries.flatMap(Self.deliveryStatus(of:)) ?? message.deliveryStatus.rawValue
        self.init(id: message.id, conversationId: message.conversationId, senderInboxId: message.senderInboxId,
                  sentAtMs: message.sentAtMs, contentType: message.contentType.rawValue, text: message.text,
                  outgoing: message.isOutgoing, deliveryStatus: status,
                  referenceId: message.referenceId, senderName: message.isOutgoing ? nil : senderName,
                  deliveries: message.isOutgoing ? deliveries?.map(MessageDelivery.init) : nil,
                  attachment: message.attachment.map(AttachmentInfo.init))
    }

    /// One status for all of a message's pushes: pending while one is pending, else failed if
    /// one failed, else relayed if one is on a relay (not yet fetched by its device, as far as
    /// this device knows), else sent if one was acked by a device that sent no receipt (yet,
    /// or with receipts off), else delivered (every member's device said it stored it,
    /// docs/protocol/receipts.md). nil when there are none.
    static func deliveryStatus(of deliveries: [OutboxRepository.MemberDelivery]) -> String? {
        let states = Set(deliveries.map(\.state))
        for state in [DBOutboxItem.State.pending, .failed, .relayed, .sent, .delivered] where states.contains(state) {
            return state.rawValue
        }
        return nil
    }
}

extension MessageDelivery {
    init(_ delivery: OutboxRepository.MemberDelivery) {
        self.init(member: delivery.memberInboxId, state: delivery.state.rawValue, attempts: delivery.attempts,
                  lastError: delivery.lastError)
    }
}

extension AttachmentInfo {
    public init(_ attachment: TimelineAttachment) {
        self.init(name: attachment.name, size: Int64(attachment.size), mediaType: attachment.mediaType,
                  state: attachment.state.rawValue, caption: attachment.caption,
                  bytesDone: attachment.bytesDone.map(Int64.init), storedLength: Int64(attachment.storedLength),
                  failure: attachment.failure)
    }
}
