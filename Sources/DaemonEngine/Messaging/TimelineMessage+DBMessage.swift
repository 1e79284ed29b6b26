import DaemonCore
import SharedStore
import SottoCrypto
import SottoWire

extension TimelineMessage {
    /// What a message whose sealed content did not open shows (docs/adr/0052): never its bytes.
    static let unreadableText = "[cannot be opened: its conversation's key is gone or the row was altered]"

    /// A stored row as the conversation store shows it: content decoded to display text
    /// (undecodable content shows its fallback or its type, never raw bytes).
    init(_ row: DBMessage) {
        let content = try? MessageContent.decode(contentType: row.contentType, content: row.content, fallback: row.fallback)
        let status: DeliveryStatus
        if row.isOutgoing {
            switch row.deliveryStatus {
            case .sent: status = .sent
            case .failed: status = .failed
            case .pending, nil: status = .pending
            }
        } else {
            status = .received
        }
        var attachment: TimelineAttachment?
        if !row.isUnreadable, case .attachment(let reference)? = content {
            attachment = TimelineAttachment(reference, isOutgoing: row.isOutgoing, transfer: row.transfer)
        }
        self.init(id: row.id, conversationId: row.conversationId, senderInboxId: row.senderInboxId,
                  sentAtMs: row.sentAt, contentType: MessageContentType(rawValue: row.contentType),
                  text: row.isUnreadable ? Self.unreadableText
                      : attachment?.text ?? content?.displayText ?? row.fallback ?? "[\(row.contentType)]",
                  referenceId: row.referenceId, isOutgoing: row.isOutgoing, deliveryStatus: status, attachment: attachment)
    }
}

extension TimelineAttachment {
    /// A reference as the timeline shows it. The sender holds its own stored copy
    /// (`available`); a recipient has the reference only (`waiting`) until the fetcher
    /// records its fetch (`transfer`, docs/adr/0078).
    init(_ reference: AttachmentReference, isOutgoing: Bool, transfer: DBAttachmentTransfer?) {
        let state: AttachmentState
        switch (isOutgoing, transfer?.state) {
        case (true, _): state = .available
        case (false, nil): state = .waiting
        case (false, .fetching?): state = .fetching
        case (false, .available?): state = .available
        case (false, .failed?): state = .failed
        }
        self.init(name: reference.name, size: reference.size, mediaType: reference.mediaType, caption: reference.caption,
                  state: state, bytesDone: state == .fetching ? transfer.map { Int($0.bytesDone) } : nil,
                  storedLength: reference.length, failure: state == .failed ? transfer?.failure : nil)
    }
}
