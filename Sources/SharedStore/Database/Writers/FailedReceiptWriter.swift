import SottoCrypto

/// The one write for a push refused for good after its signer is known (`body_missing`,
/// `body_mismatch`: docs/protocol/receipts.md §4): the `receipt_due` row that tells its sender,
/// and only when the message is for this device's inbox in a conversation it holds under that
/// topic, the signer is another member with the key it signed with, and the message id is new
/// here. Runs inside the caller's transaction.
///
/// ```swift
/// try conn.immediateTransaction { () throws(StoreError) in
///     try FailedReceiptWriter.recordIfOwed(message, topic: topic, recipientInboxId: me,
///                                          code: "body_missing", now: now, on: conn)
/// }
/// ```
public enum FailedReceiptWriter {
    /// Records the failed receipt when the checks above pass; does nothing otherwise.
    public static func recordIfOwed(_ message: SignedMessage, topic: String, recipientInboxId: String, code: String,
                                    now: Int64, on conn: SQLiteConnection) throws(StoreError) {
        guard let conversation = try ConversationRepository.find(id: message.conversationId, on: conn),
              conversation.inboxId == recipientInboxId, conversation.topic == topic,
              message.senderInboxId != recipientInboxId,
              let member = try MemberRepository.member(conversationId: message.conversationId,
                                                       inboxId: message.senderInboxId, on: conn),
              member.publicKey == message.senderPublicKey.lowercased(),
              try !MessageRepository.exists(id: message.id, on: conn)
        else { return }
        try ReceiptWriter.recordDue(messageId: message.id, conversationId: message.conversationId,
                                    senderInboxId: message.senderInboxId, error: code, now: now, on: conn)
    }
}
