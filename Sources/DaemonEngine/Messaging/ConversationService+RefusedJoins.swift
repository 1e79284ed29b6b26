import DaemonStore
import SharedStore
import SottoCrypto
import SottoWire

/// Joins the creator refused, as this device shows them (docs/protocol/join-refusal.md §5):
/// `sotto ls` lists each with its reason until the user dismisses it (`sotto dismiss`). The
/// reason shown is always one of `JoinRefusal.Reason`'s, whatever the row holds.
///
/// ```swift
/// let shown = try service.refusedJoins()              // sotto ls
/// let id = try await service.dismissRefusal("3fa2")   // sotto dismiss
/// ```
extension ConversationService {
    public struct RefusedJoin: Sendable, Equatable {
        public let conversationId: String
        public let reason: JoinRefusal.Reason
        public let askedAt: Int64
        public let refusedAt: Int64
    }

    /// Newest first, one per conversation.
    public func refusedJoins() throws -> [RefusedJoin] {
        var seen: Set<String> = []
        return try database.read { conn in try JoinRefusalRepository.all(on: conn) }.compactMap { entry in
            guard seen.insert(entry.conversationId).inserted else { return nil }
            return RefusedJoin(conversationId: entry.conversationId, reason: JoinRefusal.Reason(rawValue: entry.reason) ?? .other,
                               askedAt: entry.askedAt, refusedAt: entry.refusedAt)
        }
    }

    /// Forgets the refused join whose conversation id is `reference` or starts with it.
    /// Returns the full id.
    public func dismissRefusal(_ reference: String) async throws -> String {
        let wanted = reference.lowercased()
        guard !wanted.isEmpty, wanted.utf8.count <= 32, wanted.utf8.allSatisfy(Hex.isDigit) else {
            throw Failure.invalid("'\(reference.prefix(40))' is not a conversation id or a prefix of one")
        }
        let matches = Set(try refusedJoins().map(\.conversationId).filter { $0.hasPrefix(wanted) })
        guard let id = matches.first else { throw Failure.missing("no refused join matches '\(wanted)'") }
        guard matches.count == 1 else { throw Failure.ambiguous(wanted) }
        _ = try await database.write { conn in try JoinRefusalDismissal.dismiss(conversationId: id, on: conn) }
        return id
    }
}
