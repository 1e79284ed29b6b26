/// The one definition of the mailbox stream `SOTTO_MAILBOXES` (docs/adr/0026, 0030): both of
/// its creators (sotto-relayd and the daemon's outbox, whichever reaches a relay first) pass
/// through `RelayConnection.ensureStream`, which builds it from this. Subjects `sotto.mb.>`,
/// file storage, work-queue retention, at most one push (4096 bytes plus headers) per message,
/// a 10-minute duplicate window, and a maximum age: a message nobody consumed within
/// `maxAgeMs` (30 days) is deleted by the relay, so a push published into a retired mailbox
/// does not stay there for good.
///
/// ```swift
/// try relay.ensureStream()                                  // 1 replica, 30 days
/// try relay.ensureStream(MailboxStream(replicas: 3))        // a 3-node relay
/// ```
public struct MailboxStream: Sendable, Equatable {
    /// 30 days: what WhatsApp keeps an undelivered message, and FCM's longest time-to-live
    /// (28 days) rounded up (docs/adr/0030).
    public static let defaultMaxAgeMs: Int64 = 30 * 24 * 3_600_000
    /// How long the stream remembers a `Nats-Msg-Id` to drop a second publish of it: longer
    /// than a sender's outbox retry (up to 5 min), so a retried publish is not stored twice.
    public static let duplicateWindowMs: Int64 = 10 * 60_000
    public static let maxMessageBytes: Int32 = 8192

    /// 3 on a 3-node relay.
    public var replicas: Int
    /// A message older than this is deleted, consumed or not. 0 is no limit: how streams
    /// were made before docs/adr/0030 (tests make one to show it gets the limit).
    public var maxAgeMs: Int64

    public init(replicas: Int = 1, maxAgeMs: Int64 = MailboxStream.defaultMaxAgeMs) {
        self.replicas = replicas
        self.maxAgeMs = maxAgeMs
    }

    /// The duplicate window, never longer than the maximum age (nats-server refuses that).
    public var effectiveDuplicateWindowMs: Int64 { maxAgeMs > 0 ? min(Self.duplicateWindowMs, maxAgeMs) : Self.duplicateWindowMs }
}

/// What `ensureStream` found or did, for the caller's log.
///
/// ```swift
/// if case .ageLimitRefused(let why) = try relay.ensureStream() { log(why) }
/// ```
public enum MailboxStreamCheck: Sendable, Equatable {
    /// There was none: created from the definition.
    case created
    /// It exists with an age limit (ours or its operator's): left as it is.
    case found(maxAgeMs: Int64)
    /// It existed without an age limit (made before docs/adr/0030): the limit was added.
    case ageLimitAdded(maxAgeMs: Int64)
    /// It exists without an age limit and the relay refused to add one (this device's user
    /// may not update streams): it keeps working, but retired mailboxes can keep messages.
    case ageLimitRefused(String)
}
