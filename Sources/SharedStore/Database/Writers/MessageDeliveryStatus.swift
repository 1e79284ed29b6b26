/// An outgoing message's `deliveryStatus` from its outbox rows. Both processes run it: the
/// daemon after a push attempt, the worker after a receipt (`ReceiptWriter.apply`), so it lives
/// in the shared store while the rest of the sending SQL is the daemon's (DaemonStore).
///
/// ```swift
/// try MessageDeliveryStatus.recompute(messageId: id, on: conn)   // pending, failed or sent
/// ```
public enum MessageDeliveryStatus {
    /// `message.deliveryStatus` from its pushes: pending while one is pending, else failed when
    /// one failed, else sent (relayed, sent and delivered pushes alike).
    public static func recompute(messageId: String, on conn: SQLiteConnection) throws(StoreError) {
        try conn.run("""
            UPDATE message SET deliveryStatus = (
                SELECT CASE
                    WHEN sum(state = 'pending') > 0 THEN 'pending'
                    WHEN sum(state = 'failed') > 0 THEN 'failed'
                    ELSE 'sent' END
                FROM outbox WHERE messageId = ?1)
            WHERE id = ?1
            """, [.text(messageId)])
    }
}
