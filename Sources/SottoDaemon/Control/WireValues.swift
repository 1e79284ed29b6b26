import ControlProtocol
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
                  expiresAtMs: conversation.expiresAt)
    }
}

extension MessageInfo {
    /// A message with its sender's profile name when it has one (incoming only: `sotto read`
    /// shows "me" for outgoing, a short inbox id only without a name).
    init(_ message: TimelineMessage, senderName: String?) {
        self.init(id: message.id, conversationId: message.conversationId, senderInboxId: message.senderInboxId,
                  sentAtMs: message.sentAtMs, contentType: message.contentType.rawValue, text: message.text,
                  outgoing: message.isOutgoing, deliveryStatus: message.deliveryStatus.rawValue,
                  referenceId: message.referenceId, senderName: message.isOutgoing ? nil : senderName)
    }
}

extension ChangeNotification {
    /// A change_log row; the message members are filled in by `ChangeFeed.notificationParams`.
    init(_ change: DBChange) {
        self.init(seq: change.seq, kind: change.kind, writerPid: change.writerPid, createdAtMs: change.createdAt,
                  conversationId: change.conversationId, entityId: change.entityId)
    }
}

extension ControlFigures {
    init(_ figures: ControlStats.Figures) {
        self.init(connections: figures.connections, maxConnections: figures.maxConnections,
                  bufferedBytes: figures.bufferedBytes, refused: figures.refused, evicted: figures.evicted,
                  fileLimitHits: figures.fileLimitHits)
    }
}
