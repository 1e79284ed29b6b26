import Foundation
import SharedStore
import TestSupport

/// How a device holds one of its conversations across the database and the keystore while an
/// explode of it runs, fails or is finished (docs/adr/0016): whole, gone, or a partial state
/// that names what is left.
///
/// ```swift
/// let holding = ExplodeHolding(device: alice, conversationId: trip)   // before the explode
/// _ = try alice.cli(["explode", trip])
/// if try holding.committed() { try alice.waitUntil("gone") { try holding.state() == .gone } }
/// ```
struct ExplodeHolding {
    enum State: Equatable, CustomStringConvertible {
        case whole    // conversation and inbox rows, identity and alias files, no tombstone
        case gone     // none of them
        case partial(String)

        var description: String {
            switch self {
            case .whole: "whole"
            case .gone: "gone"
            case .partial(let what): "partial(\(what))"
            }
        }
    }

    let device: Device
    let conversationId: String
    let inboxId: String
    let clientId: String

    /// Reads the conversation's inbox and clientId: call it while the conversation exists.
    init(device: Device, conversationId: String) throws {
        self.device = device
        self.conversationId = conversationId
        let row = try device.query("SELECT inboxId, clientId FROM conversation WHERE id = ?", [.text(conversationId)])[0]
        inboxId = try row.string(0)
        clientId = try row.string(1)
    }

    func state() throws -> State {
        let inbox = try device.query("SELECT count(*) FROM inbox WHERE inboxId = ?", [.text(inboxId)])[0].int64(0)
        let conversation = try device.query("SELECT count(*) FROM conversation WHERE id = ?", [.text(conversationId)])[0].int64(0)
        let tombstones = try device.query("SELECT count(*) FROM inbox_tombstone WHERE clientId = ?", [.text(clientId)])[0].int64(0)
        let keystore = device.group.keystorePath
        let identity = FileManager.default.fileExists(atPath: "\(keystore)/\(clientId).identity")
        let alias = FileManager.default.fileExists(atPath: "\(keystore)/\(inboxId).inbox")
        if inbox == 1, conversation == 1, identity, alias, tombstones == 0 { return .whole }
        if inbox == 0, conversation == 0, !identity, !alias, tombstones == 0 { return .gone }
        return .partial("inbox=\(inbox) conversation=\(conversation) identity=\(identity) alias=\(alias) tombstones=\(tombstones)")
    }

    /// Whether the explode reached its commit: the conversation has an explosion time, or is
    /// already (partly) deleted.
    func committed() throws -> Bool {
        let rows = try device.query("SELECT expiresAt FROM conversation WHERE id = ?", [.text(conversationId)])
        guard let row = rows.first else { return true }
        return try row.optionalInt64(0) != nil
    }
}
