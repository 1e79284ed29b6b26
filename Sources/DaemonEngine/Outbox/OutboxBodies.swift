import DaemonStore
import SharedStore

/// The sealed bodies one outbox pass needs, read once per message however many of its
/// members are due (docs/adr/0032).
///
/// ```swift
/// var bodies = OutboxBodies(database: database)
/// switch bodies.lookup(for: item) {
/// case .inline: … the push carries its message …
/// case .body(let body): … deliver with body.sealed …
/// case .missing: … the push names a body that is not stored: fail it …
/// case .unreadable(let why): … try again later …
/// }
/// ```
struct OutboxBodies {
    enum Lookup: Sendable, Equatable {
        case inline
        case body(OutboxBodyRepository.Body)
        /// The push names a body this database does not hold (it cannot come back).
        case missing
        /// The database could not be read now.
        case unreadable(String)
    }

    private let database: DaemonDatabase
    private var known: [String: OutboxBodyRepository.Body] = [:]

    init(database: DaemonDatabase) {
        self.database = database
    }

    mutating func lookup(for item: DBOutboxItem) -> Lookup {
        guard item.bodyId != nil else { return .inline }
        if let body = known[item.messageId] { return .body(body) }
        do {
            guard let body = try database.read({ conn in try OutboxBodyRepository.body(messageId: item.messageId, on: conn) })
            else { return .missing }
            known[item.messageId] = body
            return .body(body)
        } catch {
            return .unreadable("the message's body could not be read: \(error)")
        }
    }
}
