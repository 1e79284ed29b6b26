import SottoCrypto

/// Both ends of a delivery receipt in the shared database (docs/protocol/receipts.md):
/// the recipient of a message records that its sender is owed one (`recordDue`, in the
/// worker's commit), and the sender applies a verified receipt to its outbox (`apply`).
/// Each runs inside the caller's transaction.
///
/// ```swift
/// try ReceiptWriter.recordDue(messageId: m.id, conversationId: m.conversationId,
///                             senderInboxId: m.senderInboxId, error: nil, now: now, on: conn)
/// let seq = try ReceiptWriter.apply(receipt, conversationId: cid, signerInboxId: member, now: now, on: conn)
/// ```
public enum ReceiptWriter {
    /// What `lastError` says for a push a member's receipt reported as failed.
    public static func failureReason(_ code: String) -> String { "\(code) (reported by the member's device)" }

    /// Queues a receipt entry for `messageId` to its sender: `delivered` when `error` is nil,
    /// else `failed` with that code. Nothing when the conversation's receipts are off, or an
    /// entry for the message is already queued.
    public static func recordDue(messageId: String, conversationId: String, senderInboxId: String, error: String?,
                                 now: Int64, on conn: SQLiteConnection) throws(StoreError) {
        try conn.run("""
            INSERT OR IGNORE INTO receipt_due(messageId, conversationId, senderInboxId, status, error, createdAt)
            SELECT ?1, ?2, ?3, ?4, ?5, ?6
            WHERE EXISTS (SELECT 1 FROM conversation_local_state WHERE conversationId = ?2 AND receipts = 1)
            """, [.text(messageId), .text(conversationId), .text(senderInboxId),
                  .text(error == nil ? "delivered" : "failed"), .optional(error), .integer(now)])
    }

    /// Applies a receipt signed by member `signerInboxId`: each message it names must be one
    /// of ours in this conversation with a push to that member, else the whole receipt is
    /// refused (`unknownMessage`) before anything is written. A delivered push becomes
    /// `delivered`; a failed one `failed` with the code, unless it was already delivered.
    /// Applying the same receipt again changes nothing. Returns the last change_log seq.
    public static func apply(_ receipt: Receipt, conversationId: String, signerInboxId: String, now: Int64,
                             on conn: SQLiteConnection) throws(IncomingWriteError) -> Int64 {
        do {
            for messageId in receipt.messageIds {
                let row = try conn.queryOne("""
                    SELECT 1 FROM outbox o JOIN message m ON m.id = o.messageId
                    WHERE o.messageId = ? AND o.memberInboxId = ? AND m.conversationId = ? AND m.isOutgoing = 1
                    """, [.text(messageId), .text(signerInboxId), .text(conversationId)])
                guard row != nil else {
                    throw IncomingWriteError.unknownMessage("the receipt names a message this device did not send to its signer")
                }
            }
            var seq: Int64 = 0
            for messageId in receipt.delivered {
                try conn.run("UPDATE outbox SET state = 'delivered', lastError = NULL WHERE messageId = ? AND memberInboxId = ?",
                             [.text(messageId), .text(signerInboxId)])
                seq = try statusChanged(messageId: messageId, conversationId: conversationId, now: now, on: conn)
            }
            for failure in receipt.failed {
                try conn.run("""
                    UPDATE outbox SET state = 'failed', lastError = ?
                    WHERE messageId = ? AND memberInboxId = ? AND state <> 'delivered'
                    """, [.text(failureReason(failure.error)), .text(failure.messageId), .text(signerInboxId)])
                seq = try statusChanged(messageId: failure.messageId, conversationId: conversationId, now: now, on: conn)
            }
            return seq
        } catch let error as IncomingWriteError {
            throw error
        } catch let error as StoreError {
            throw .store(error)
        } catch {
            throw .store(.sqlite(code: SQLiteResultCode.error, message: "unexpected error"))
        }
    }

    /// The message's status from its pushes (as the daemon's `OutgoingMessageWriter.recordAttempt`), its
    /// body once no push is pending (the outbox no longer retries a delivered push), and a
    /// `messageStatusChanged` change.
    private static func statusChanged(messageId: String, conversationId: String, now: Int64,
                                      on conn: SQLiteConnection) throws(StoreError) -> Int64 {
        try MessageDeliveryStatus.recompute(messageId: messageId, on: conn)
        try conn.run("""
            DELETE FROM outbox_body WHERE messageId = ?1
              AND NOT EXISTS (SELECT 1 FROM outbox WHERE messageId = ?1 AND state = 'pending')
            """, [.text(messageId)])
        return try ChangeLog.append(conn, kind: .messageStatusChanged, conversationId: conversationId,
                                    entityId: messageId, now: now)
    }
}
