import RelayTransport

/// Empties a mailbox through its own consumer, for a retirement on a relay where the owner may
/// not purge (docs/adr/0051): every message left is fetched and terminated, which a work-queue
/// stream deletes. What a sender publishes after it stays until the stream's age limit, as
/// after a purge.
///
/// ```swift
/// let terminated = try MailboxDrain.terminateAll(relay: relay, mailbox: slot.mailbox, ackWaitMs: 40_000)
/// ```
enum MailboxDrain {
    static func terminateAll(relay: RelayConnection, mailbox: Mailbox, ackWaitMs: Int64) throws(RelayError) -> Int {
        // Delivered to a fetch of an earlier process and not settled: a consumer made afresh
        // delivers them now instead of after the ack wait (as in docs/adr/0047).
        if let state = try relay.consumerState(mailbox), state.ackPending > 0 { try relay.deleteConsumer(mailbox) }
        let consumer = try MailboxConsumer(relay: relay, mailbox: mailbox, ackWaitMs: ackWaitMs)
        defer { consumer.close() }
        var terminated = 0
        while true {
            let pending = try relay.consumerState(mailbox)
            guard let pending, pending.pending > 0 || pending.ackPending > 0 else { return terminated }
            let batch = try consumer.fetch(max: 256, waitMs: 500)
            if batch.isEmpty, pending.pending == 0 { return terminated }  // terminations in flight
            for message in batch {
                try message.terminate()
                terminated += 1
            }
        }
    }
}
