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
        let consumer = try MailboxConsumer(relay: relay, mailbox: mailbox, ackWaitMs: ackWaitMs)
        defer { consumer.close() }
        var terminated = 0
        while true {
            let pending = try relay.consumerState(mailbox)
            guard let pending, pending.pending > 0 || pending.ackPending > 0 else { return terminated }
            let batch = try consumer.fetch(max: 256, waitMs: 500)
            if batch.isEmpty, pending.pending == 0 {
                // Delivered to an earlier process and never settled: the relay gives them back
                // only after its ack wait (deleting the consumer first would let another
                // member's consumer claim the subject); the retirement is tried again later.
                if terminated == 0, pending.ackPending > 0 {
                    throw .call(operation: "drain \(mailbox)", status: "\(pending.ackPending) messages await the relay's ack wait", code: 0)
                }
                return terminated
            }
            for message in batch {
                try message.terminate()
                terminated += 1
            }
        }
    }
}
