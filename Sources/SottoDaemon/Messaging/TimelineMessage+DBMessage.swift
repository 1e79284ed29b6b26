import SharedStore

extension TimelineMessage {
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
        self.init(id: row.id, conversationId: row.conversationId, senderInboxId: row.senderInboxId,
                  sentAtMs: row.sentAt, contentType: MessageContentType(rawValue: row.contentType),
                  text: content?.displayText ?? row.fallback ?? "[\(row.contentType)]",
                  referenceId: row.referenceId, isOutgoing: row.isOutgoing, deliveryStatus: status)
    }

    /// The JSON a control-socket client gets for this message, with the sender's profile
    /// name when it has one (`sotto read` shows it; a short inbox id only without one).
    func rpcObject(senderName: String?) -> [String: Any] {
        var object = rpcObject
        if let senderName, !isOutgoing { object["senderName"] = senderName }
        return object
    }

    /// The JSON a control-socket client gets for this message.
    var rpcObject: [String: Any] {
        var object: [String: Any] = [
            "id": id, "conversationId": conversationId, "senderInboxId": senderInboxId,
            "sentAtMs": sentAtMs, "contentType": contentType.rawValue, "text": text,
            "outgoing": isOutgoing, "deliveryStatus": deliveryStatus.rawValue,
        ]
        if let referenceId { object["referenceId"] = referenceId }
        return object
    }
}
