import ControlProtocol
import ControlServer
import DaemonCore
import DaemonEngine
import DaemonStore
import SharedStore

// The daemon's records as the control API's wire types (ControlProtocol). One initializer
// per type, so each wire member is filled in one place.

extension ConversationInfo {
    /// One row of `sotto ls`.
    init(_ summary: ConversationSummary) {
        let conversation = summary.conversation
        self.init(id: conversation.id, state: conversation.state.rawValue, inboxId: conversation.inboxId,
                  unread: summary.unread, members: summary.memberCount, awake: summary.awake,
                  isCreator: conversation.creatorInboxId == conversation.inboxId, name: conversation.name,
                  expiresAtMs: conversation.expiresAt, muted: summary.muted,
                  lastMessage: summary.lastMessage.map { MessageInfo($0, senderName: summary.lastMessageSenderName) })
    }
}

extension RefusedJoinInfo {
    /// A refused join: its reason always from the closed set, with its words.
    init(_ refused: ConversationService.RefusedJoin) {
        self.init(id: refused.conversationId, reason: refused.reason.rawValue, reasonText: refused.reason.words,
                  askedAtMs: refused.askedAt, refusedAtMs: refused.refusedAt)
    }
}

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
                  deliveries: message.isOutgoing ? deliveries?.map(MessageDelivery.init) : nil)
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

extension ControlFigures {
    init(_ figures: ControlStats.Figures) {
        self.init(connections: figures.connections, maxConnections: figures.maxConnections,
                  bufferedBytes: figures.bufferedBytes, refused: figures.refused, evicted: figures.evicted,
                  fileLimitHits: figures.fileLimitHits)
    }
}
