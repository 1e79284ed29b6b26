import Foundation
import SharedStore
import SottoCrypto

/// A device's pending joins and the joins refused to it (docs/protocol/join-refusal.md), as a
/// test looks at them: through `sotto ls --json`, the database and the keystore files.
///
/// ```swift
/// let pending = try bob.pendingJoin(trip)          // before the refusal: its identity, file, request id
/// try bob.waitUntil("refused") { try bob.refusedJoin(trip)?["reason"] as? String == "revoked" }
/// ```
extension Device {
    /// What a join this device asked for holds while it is pending.
    public struct PendingJoin: Sendable {
        public let conversationId: String
        public let identity: Identity
        /// The message id of the `sotto/join_request:1.0` it sent.
        public let joinRequestId: String
        public let identityFile: String
    }

    public func pendingJoin(_ conversationId: String) throws -> PendingJoin {
        guard let row = try query("""
                SELECT i.clientId, m.id FROM conversation c JOIN inbox i ON i.inboxId = c.inboxId
                JOIN message m ON m.conversationId = c.id AND m.isOutgoing = 1 AND m.contentType = 'sotto/join_request:1.0'
                WHERE c.id = ? AND c.state = 'pendingJoin'
                """, [.text(conversationId)]).first else {
            throw Failure(message: "\(name): no pending join of \(conversationId)")
        }
        let clientId = try row.string(0)
        let identity = try Keystore(directory: group.keystorePath, environment: [:]).identity(clientId: clientId)
        return PendingJoin(conversationId: conversationId, identity: identity, joinRequestId: try row.string(1),
                           identityFile: group.keystorePath + "/\(clientId).identity")
    }

    /// `sotto ls --json`'s refused joins.
    public func refusedJoins() throws -> [[String: Any]] {
        try json(["ls"])["refusedJoins"] as? [[String: Any]] ?? []
    }

    public func refusedJoin(_ conversationId: String) throws -> [String: Any]? {
        try refusedJoins().first { $0["id"] as? String == conversationId }
    }

    /// True once the pending join's rows, identity file and tombstone are all gone, as after
    /// an explode (docs/adr/0016, 0033).
    public func isDeleted(_ pending: PendingJoin) throws -> Bool {
        try query("SELECT count(*) FROM conversation WHERE id = ?", [.text(pending.conversationId)])[0].int64(0) == 0
            && query("SELECT count(*) FROM inbox WHERE clientId = ?", [.text(pending.identity.clientId)])[0].int64(0) == 0
            && query("SELECT count(*) FROM inbox_tombstone")[0].int64(0) == 0
            && !FileManager.default.fileExists(atPath: pending.identityFile)
    }
}
