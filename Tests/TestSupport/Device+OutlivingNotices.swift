import Foundation
import SharedStore

/// What a test reads of the notices that outlive their conversation (docs/adr/0034) and of
/// what a deleted conversation may leave on a device.
///
/// ```swift
/// let waiting = try alice.outlivingNotices()          // [1, 1]: waiting, members (`sotto status --json`)
/// #expect(try alice.leftovers(of: ids).isEmpty)       // no rows, no identity files, no tombstone
/// ```
extension Device {
    /// `sotto status --json`'s `outlivingNotices` as `[waiting, members]`.
    public func outlivingNotices() throws -> [Int] {
        let status = try json(["status"])
        guard let figures = status["outlivingNotices"] as? [String: Any],
              let waiting = (figures["waiting"] as? NSNumber)?.intValue,
              let members = (figures["members"] as? NSNumber)?.intValue else {
            throw Failure(message: "\(name): status has no outlivingNotices: \(status)")
        }
        return [waiting, members]
    }

    /// One conversation's ids on this device, read while it still exists.
    public struct ConversationIds: Sendable {
        public let conversationId: String
        public let inboxId: String
        public let clientId: String
    }

    public func conversationIds(_ conversationId: String) throws -> ConversationIds {
        let rows = try query("SELECT inboxId, clientId FROM conversation WHERE id = ?", [.text(conversationId)])
        guard let row = rows.first else { throw Failure(message: "\(name) has no conversation \(conversationId)") }
        return ConversationIds(conversationId: conversationId, inboxId: try row.string(0), clientId: try row.string(1))
    }

    /// What is left of a deleted conversation here: rows that name it or its inbox, its
    /// identity and alias files, a tombstone. Empty when it is gone completely.
    public func leftovers(of ids: ConversationIds) throws -> [String] {
        var found: [String] = []
        let counts: [(String, String, String)] = [
            ("inbox", "SELECT count(*) FROM inbox WHERE inboxId = ?", ids.inboxId),
            ("conversation", "SELECT count(*) FROM conversation WHERE id = ?", ids.conversationId),
            ("message", "SELECT count(*) FROM message WHERE conversationId = ?", ids.conversationId),
            ("member", "SELECT count(*) FROM member WHERE conversationId = ?", ids.conversationId),
            ("tombstone", "SELECT count(*) FROM inbox_tombstone WHERE clientId = ?", ids.clientId),
        ]
        for (what, sql, id) in counts where try query(sql, [.text(id)])[0].int64(0) != 0 { found.append(what) }
        if try query("SELECT count(*) FROM outbox")[0].int64(0) != 0 { found.append("outbox") }
        let keystore = group.keystorePath
        if FileManager.default.fileExists(atPath: "\(keystore)/\(ids.clientId).identity") { found.append("identity file") }
        if FileManager.default.fileExists(atPath: "\(keystore)/\(ids.inboxId).inbox") { found.append("alias file") }
        return found
    }
}
