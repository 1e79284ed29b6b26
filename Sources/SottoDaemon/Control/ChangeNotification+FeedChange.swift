import ControlProtocol
import DaemonEngine
import SharedStore

// The change feed's values as the control API's wire types: where the feed meets the
// socket. The engine reads each change once (`FeedChange`); every subscriber's notification
// is made from that one value, so a client's timeline shows a new or changed message without
// reading it back (docs/adr/0070).

extension ChangeNotification {
    /// A change as its `change` notification: a new message also carries what `sotto watch`
    /// prints for it (its text, whether this device sent it, its sender and the sender's
    /// profile name when it has one); a new or changed message carries the message as
    /// `readMessages` returns it.
    init(_ feedChange: FeedChange) {
        let change = feedChange.change
        self.init(seq: change.seq, kind: change.kind, writerPid: change.writerPid, createdAtMs: change.createdAt,
                  conversationId: change.conversationId, entityId: change.entityId)
        guard let message = feedChange.message,
              feedChange.knownKind == .messageInserted || feedChange.knownKind == .messageStatusChanged else { return }
        let info = MessageInfo(message, senderName: feedChange.senderName, deliveries: feedChange.deliveries)
        self.message = info
        if feedChange.knownKind == .messageInserted {
            text = info.text
            outgoing = info.outgoing
            senderInboxId = info.senderInboxId
            senderName = info.senderName
        }
    }
}

extension ChangeGap {
    /// Changes a replay could not read, as the `subscribe` result names them.
    init(_ gap: FeedGap) {
        self.init(afterSeq: gap.afterSeq, resumedAtSeq: gap.resumedAtSeq, reason: gap.reason, remedy: gap.remedy)
    }
}
