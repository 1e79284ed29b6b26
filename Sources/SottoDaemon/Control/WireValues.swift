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

extension ControlFigures {
    init(_ figures: ControlStats.Figures) {
        self.init(connections: figures.connections, maxConnections: figures.maxConnections,
                  bufferedBytes: figures.bufferedBytes, refused: figures.refused, evicted: figures.evicted,
                  fileLimitHits: figures.fileLimitHits)
    }
}
