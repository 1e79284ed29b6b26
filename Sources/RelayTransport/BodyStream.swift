import SottoWire

/// The one definition of the body stream `SOTTO_BODIES` (docs/protocol/bodies.md §6): sealed
/// bodies by reference, one message per body under `sotto.body.<body id>`. At most one message
/// per subject, and a second publish to a subject is refused by the relay itself
/// (discard-new-per-subject): the first publish of a body is the only one, so nobody who can
/// publish can replace it. Limits retention with the mailboxes' 30-day age: the relay cannot
/// know when the last member has fetched a body.
///
/// ```swift
/// try relay.ensureBodyStream()                              // 1 replica, 30 days
/// try relay.publishBody(body.sealed, id: reference.id)      // once per relay, before the pushes
/// let sealed = try relay.body(id: hint.id)                  // nil: expired or never published
/// ```
public struct BodyStream: Sendable, Equatable {
    public static let streamName = "SOTTO_BODIES"
    public static let subjectPrefix = "sotto.body."
    public static let allSubjects = "sotto.body.>"
    /// A sealed body and its headers: nats-server's default `max_payload`.
    public static let maxMessageBytes: Int32 = 1_048_576

    public var replicas: Int
    public var maxAgeMs: Int64

    public init(replicas: Int = 1, maxAgeMs: Int64 = MailboxStream.defaultMaxAgeMs) {
        self.replicas = replicas
        self.maxAgeMs = maxAgeMs
    }

    /// The subject of one body; nil for anything but a body id (32 lowercase hex), so no
    /// wildcard or token separator reaches a subject.
    public static func subject(id: String) -> String? {
        ProtocolIds.isId16(id) ? subjectPrefix + id : nil
    }
}
