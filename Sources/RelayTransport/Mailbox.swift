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
/// ```
public struct Mailbox: Sendable, Hashable, CustomStringConvertible {
    public static let streamName = "SOTTO_MAILBOXES"
    public static let subjectPrefix = "sotto.mb."
    public static let allSubjects = "sotto.mb.>"

    public let clientId: String

    public init(clientId: String) throws(RelayError) {
        guard ProtocolIds.isClientId(clientId) else {
            throw .call(operation: "mailbox", status: "not a canonical clientId", code: 0)
        }
        self.clientId = clientId
    }

    /// The mailbox a message arrived on, from its subject; nil for any other subject.
    public init?(subject: String) {
        guard subject.hasPrefix(Self.subjectPrefix),
              let box = try? Mailbox(clientId: String(subject.dropFirst(Self.subjectPrefix.count))) else { return nil }
        self = box
    }

    public var subject: String { Self.subjectPrefix + clientId }
    public var durable: String { "mb-" + clientId }
    public var description: String { subject }
}
