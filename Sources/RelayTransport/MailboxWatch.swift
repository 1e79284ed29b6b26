import CNats

/// Told when a message is published into a watched mailbox. Called on the C client's thread:
/// keep it short (note the mailbox, wake your loop).
///
/// ```swift
/// final class Wakeup: MailboxWakeHandler { func mailboxReceived(_ box: Mailbox) { queue.insert(box) } }
/// ```
public protocol MailboxWakeHandler: AnyObject, Sendable {
    func mailboxReceived(_ mailbox: Mailbox)
}

/// A plain (not JetStream) subscription to one mailbox subject, so the receiver learns of a
/// new message the moment it is published instead of polling every consumer (docs/adr/0026).
/// The C client re-subscribes after a reconnect by itself. The message bytes it carries are
/// dropped: the durable consumer delivers them.
///
/// ```swift
/// let watch = try MailboxWatch(relay: relay, mailbox: box, handler: wakeup)
/// watch.close()
/// ```
public final class MailboxWatch {
    public let mailbox: Mailbox
    private var subscription: OpaquePointer?
    /// Callbacks get it unretained: the watch (and, for one already running, its owner) keeps it alive.
    private let handler: any MailboxWakeHandler

    public init(relay: RelayConnection, mailbox: Mailbox, handler: any MailboxWakeHandler) throws(RelayError) {
        self.mailbox = mailbox
        self.handler = handler
        let box = Unmanaged.passUnretained(handler as AnyObject).toOpaque()
        var sub: OpaquePointer?
        // With per-identity users the mailbox subject is not theirs to subscribe to: the
        // operator's stream republishes a headers-only notice of each push (docs/adr/0051).
        let subject = relay.userPublicKey == nil ? mailbox.subject : mailbox.wakeSubject
        let status = natsConnection_Subscribe(&sub, relay.connection, subject, { _, _, message, closure in
            defer { natsMsg_Destroy(message) }
            guard let closure, let message, let subject = natsMsg_GetSubject(message),
                  let box = Mailbox(subject: String(cString: subject)),
                  let handler = Unmanaged<AnyObject>.fromOpaque(closure).takeUnretainedValue() as? any MailboxWakeHandler
            else { return }
            handler.mailboxReceived(box)
        }, box)
        try NatsCall.check(status, "watch \(mailbox)")
        subscription = sub
    }

    deinit { close() }

    public func close() {
        guard let subscription else { return }
        natsSubscription_Unsubscribe(subscription)
        natsSubscription_Destroy(subscription)
        self.subscription = nil
    }
}
