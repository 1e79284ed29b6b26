import Foundation
import SharedStore
import SottoCrypto
import TestSupport
import SottoWire

/// One device's database for the roster vectors: the device R's inbox and a conversation C
/// created, with the start roster, fed decoded roster messages through the worker's writer.
final class RosterDevice {
    let file: RosterVectors.File
    let tmp: TemporaryDirectory
    let conn: SQLiteConnection
    let conversationId = StoreFixture.randomHex(16)
    let now: Int64 = 1_763_760_000_000

    var topic: String { DBConversation.topic(for: conversationId) }
    var me: MemberEntry { file.members["R"]! }

    init(file: RosterVectors.File, start: RosterVectors.Roster) throws {
        self.file = file
        tmp = try TemporaryDirectory()
        let directory = GroupDirectory(path: tmp.path + "/group")
        try directory.create()
        conn = try SQLiteConnection.open(path: directory.databasePath, profile: .worker, create: true)
        try Migrator.migrate(conn)
        let me = file.members["R"]!, creator = file.members["C"]!
        let members = start.members.map { file.members[$0]! }
        let id = conversationId
        try conn.immediateTransaction { () throws(InboxWriteError) in
            try InboxWriter.save(inboxId: me.inboxId, clientId: me.clientId, now: now, on: conn)
            try InboxWriter.createConversation(
                NewConversation(id: id, inboxId: me.inboxId, name: "Trip", creatorInboxId: creator.inboxId,
                                state: .active, createdAt: now, members: members), on: conn)
        }
        _ = try conn.run("UPDATE conversation SET rosterVersion = ? WHERE id = ?", [.integer(start.version), .text(id)])
    }

    /// "written", "duplicate", or the ack's error code.
    func receive(_ arrival: RosterVectors.Arrival) -> String {
        let content: MessageContent
        do {
            content = try MessageContent.decode(contentType: arrival.contentType, content: arrival.content, fallback: nil)
        } catch {
            return error.code.rawValue
        }
        let sender = file.members[arrival.from]!
        let message = IncomingMessage(id: arrival.id, conversationId: conversationId, senderInboxId: sender.inboxId,
                                      senderPublicKey: sender.publicKey, sentAtMs: now, contentType: arrival.contentType,
                                      content: arrival.content, fallback: nil, kind: IncomingMessage.Kind(content))
        do {
            let outcome = try conn.immediateTransaction { () throws(IncomingWriteError) in
                try IncomingMessageWriter.write(message, recipientInboxId: me.inboxId, topic: topic, now: now, on: conn)
            }
            if case .duplicate = outcome { return "duplicate" }
            return "written"
        } catch {
            return error.protocolCode
        }
    }

    func roster() throws -> RosterVectors.Roster {
        let id = conversationId
        let members = try MemberRepository.members(of: id, on: conn).map { file.label(of: $0.inboxId) ?? $0.inboxId }
        let pending = try conn.query("SELECT base FROM roster_pending WHERE conversationId = ? ORDER BY base", [.text(id)])
            .map { try $0.int64(0) }
        return RosterVectors.Roster(version: try RosterWriter.version(of: id, on: conn), members: members.sorted(),
                                    pending: pending)
    }

    /// Every row of every table this feature or a message touches, to prove nothing was written.
    func snapshot() throws -> [[Row]] {
        try ["conversation", "member", "member_profile", "message", "roster_pending", "roster_departed", "change_log"].map { table in
            try conn.query("SELECT * FROM \(table) ORDER BY 1, 2")
        }
    }
}
