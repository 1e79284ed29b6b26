import SottoWire

/// The relay's names for one identity's mailbox (docs/adr/0026): one stream holds every
/// mailbox; identity `clientId` has the subject `sotto.mb.<clientId>` and the durable pull
/// consumer `mb-<clientId>`. Only a canonical clientId makes a name, so nothing that reaches
/// here can smuggle a NATS wildcard (`*`, `>`) or a token separator into a subject.
///
/// ```swift
/// let box = try Mailbox(clientId: "3f0c7a52-8d1e-4b7a-9a55-2f4f0c1d9e10")
/// box.subject    // "sotto.mb.3f0c7a52-8d1e-4b7a-9a55-2f4f0c1d9e10"
/// box.durable    // "mb-3f0c7a52-8d1e-4b7a-9a55-2f4f0c1d9e10"
/// let owned = box.owned(by: "UAB…")   // on a relay with per-identity users (docs/adr/0051)
/// owned.durable  // "UAB…": the only consumer name its user may create, use or delete
/// ```
///
/// Two mailboxes are equal when their clientIds are: the owner only names the consumer.
public struct Mailbox: Sendable, Hashable, CustomStringConvertible {
    public static let streamName = "SOTTO_MAILBOXES"
    public static let subjectPrefix = "sotto.mb."
    public static let allSubjects = "sotto.mb.>"
    /// Where the operator's mailbox stream republishes a headers-only copy of each push
    /// (docs/adr/0051): users may not subscribe to `sotto.mb.>`.
    public static let wakePrefix = "sotto.wake."

    public let clientId: String
    /// The public nkey of the identity's relay user, on a relay with per-identity users: it
    /// names the durable consumer. nil on any other relay.
    public let owner: String?

    public init(clientId: String) throws(RelayError) {
        guard ProtocolIds.isClientId(clientId) else {
            throw .call(operation: "mailbox", status: "not a canonical clientId", code: 0)
        }
        self.clientId = clientId
        self.owner = nil
    }

    private init(clientId: String, owner: String?) {
        self.clientId = clientId
        self.owner = owner
    }

    /// The same mailbox, its consumer named by its owner's public nkey.
    public func owned(by publicKey: String) -> Mailbox { Mailbox(clientId: clientId, owner: publicKey) }

    /// The mailbox a message (or its wake notice) arrived on, from its subject; nil for any other subject.
    public init?(subject: String) {
        for prefix in [Self.subjectPrefix, Self.wakePrefix] where subject.hasPrefix(prefix) {
            guard let box = try? Mailbox(clientId: String(subject.dropFirst(prefix.count))) else { return nil }
            self = box
            return
        }
        return nil
    }

    public var subject: String { Self.subjectPrefix + clientId }
    public var wakeSubject: String { Self.wakePrefix + clientId }
    public var durable: String { owner ?? "mb-" + clientId }
    public static func == (lhs: Mailbox, rhs: Mailbox) -> Bool { lhs.clientId == rhs.clientId }
    public func hash(into hasher: inout Hasher) { hasher.combine(clientId) }
    public var description: String { subject }
}
