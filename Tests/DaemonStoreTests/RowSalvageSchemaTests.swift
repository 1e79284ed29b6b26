import DaemonStore
import SharedStore
import Testing
import TestSupport

/// `sotto repair` rebuilds the database at this build's schema from a damaged file, which can
/// be from an older schema: the daemon refuses a damaged file before it migrates it.
@Suite("Row salvage across schema versions")
struct RowSalvageSchemaTests {
    @Test("a v3 file's rows reach a fresh current file: later columns keep their defaults, later tables stay empty")
    func salvagesAnOlderSchema() throws {
        let f = try StoreFixture(seed: false)
        let oldPath = f.directory.path + "/old.sqlite"
        let old = try OlderSchemaFile.open(oldPath, version: 3, rows: """
                INSERT INTO inbox(inboxId, clientId, createdAt) VALUES ('i1', 'c1', 1);
                INSERT INTO conversation(id, inboxId, clientId, topic, creatorInboxId, createdAt, state)
                    VALUES ('v1', 'i1', 'c1', '/t', 'i1', 1, 'active');
                INSERT INTO conversation_local_state(conversationId, unreadCount, muted) VALUES ('v1', 3, 1);
                INSERT INTO invite(id, conversationId, secret, createdAt, expiresAt) VALUES ('n1', 'v1', 's1', 5, NULL);
                INSERT INTO message(id, conversationId, senderInboxId, sentAt, receivedAt, contentType, content)
                    VALUES ('m1', 'v1', 'i1', 1, 1, 'xmtp.org/text:1.0', x'6869');
                """)
        let fresh = try SQLiteConnection.open(path: f.directory.path + "/fresh.sqlite", profile: .worker, create: true)
        try Migrator.migrate(fresh)

        let results = try RowSalvage.copyReadableRows(from: oldPath, into: fresh)
        #expect(results.allSatisfy { $0.damaged == nil })
        #expect(results.first { $0.table == "invite" }?.rows == 1)
        #expect(results.first { $0.table == "message" }?.rows == 1)
        #expect(try InvitationWriter.invite(id: "n1", on: fresh) == DBInvite(id: "n1", conversationId: "v1", secret: "s1",
                                                                                createdAt: 5, expiresAt: nil))
        #expect(try fresh.queryOne("SELECT unreadCount, muted, notificationPreview FROM conversation_local_state")
                    .map { [try $0.int64(0), try $0.int64(1)] } == [3, 1])
        #expect(try fresh.queryOne("SELECT notificationPreview FROM conversation_local_state")?.optionalString(0) == nil)
        #expect(try fresh.queryOne("SELECT count(*) FROM device_setting")?.int64(0) == 0)
        #expect(try fresh.queryOne("SELECT count(*) FROM outbox_body")?.int64(0) == 0)
    }
}
