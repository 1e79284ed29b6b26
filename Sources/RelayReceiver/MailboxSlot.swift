import RelayTransport

/// What the receiver holds for one identity: its own relay connection (no other identity's
/// mailbox ever goes over it, docs/adr/0044), its consumer and watch on that connection (nil
/// until opened, or while the relay is away), and when its mailbox is next to be drained.
///
/// ```swift
/// let slot = MailboxSlot(mailbox: try Mailbox(clientId: id))
/// slot.isDue(at: now)   // due and not held back by a retry delay
/// ```
final class MailboxSlot {
    let mailbox: Mailbox
    /// This identity's connection; nil until the slot is first opened, kept across reconnects.
    var relay: RelayConnection?
    /// The identity's own relay user, with a signing key (docs/adr/0051); nil otherwise.
    var user: Nkey?
    /// Its loss and return, for the log (set with `relay`).
    var link: ConnectionLossLog.Link?
    var consumer: MailboxConsumer?
    var watch: MailboxWatch?
    /// Something may be waiting: drain when `notBefore` has passed.
    var due = false
    var notBefore: Int64 = 0
    /// With per-identity users (docs/adr/0051): how many messages an earlier process or
    /// connection left delivered and unacked; the relay redelivers them after its ack wait,
    /// and the next drain collects them all and hands them over in stream order.
    var redeliveriesAwaited: Int64 = 0
    /// When opening the consumer failed: try again then.
    var openRetryAt: Int64 = 0
    /// Retirements of this mailbox that failed in a row (the relay refused or lost a call):
    /// the next is tried after `retryDelay` of them, not at the next minute's rescan.
    var failedRetirements: UInt64 = 0
    /// While it has no connection: not opened before then (`ConnectSpread`), so a device's
    /// identities do not open their connections together.
    var connectAt: Int64 = 0
    /// First scan that did not find the identity (nil while it is in the keystore).
    var missingSince: Int64?
    /// The daemon keeps its inbox awake: it holds its connection and watch. A sleeping one
    /// has a connection only while it is drained (docs/adr/0056); `connectAt` is its next drain.
    var isAwake = true
    /// A mailbox that fell asleep with its connection open keeps it until then: a random
    /// moment of its own, so it does not close at the instant the inbox that evicted it opens.
    var keepUntil: Int64 = 0

    init(mailbox: Mailbox) {
        self.mailbox = mailbox
    }

    var isOpen: Bool { consumer != nil }

    /// When the loop may open it: after a failed open, and without a connection not before
    /// its moment to connect.
    var openAt: Int64 { relay == nil ? max(openRetryAt, connectAt) : openRetryAt }

    func isDue(at now: Int64) -> Bool {
        due && now >= notBefore
    }

    /// The next time this slot needs the loop, if any.
    func nextWake(now: Int64) -> Int64? {
        var next: Int64?
        // Only an open slot drains; one without its consumer waits for its moment to open (a
        // due slot not yet open made the loop spin through relayd's 5 s start spread).
        if due, isOpen { next = max(now, notBefore) }
        // A slot whose identity is missing is not opened: the rescan retires it.
        if !isOpen, missingSince == nil { next = min(next ?? openAt, max(now, openAt)) }
        if !isAwake, isOpen, !due { next = min(next ?? keepUntil, max(now, keepUntil)) }
        return next
    }

    /// Stops fetching and watching; the connection stays (see `disconnect`).
    func close() {
        watch?.close()
        watch = nil
        consumer?.close()
        consumer = nil
    }

    /// `close`, and the identity's connection too (retired, or relayd stops).
    func disconnect(_ losses: ConnectionLossLog) {
        close()
        if let link { losses.closing(link) }
        relay?.close()
        relay = nil
        link = nil
    }
}
