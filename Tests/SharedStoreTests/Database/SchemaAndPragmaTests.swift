import Foundation
import DaemonStore
import SharedStore
import Testing
import TestSupport

@Suite("Store schema and pragmas")
struct SchemaAndPragmaTests {
    @Test func migratesFromEmptyAndIsIdempotent() throws {
        let f = try StoreFixture(seed: false)
        let conn = try SQLiteConnection.open(path: f.directory.databasePath, profile: .worker, create: true)
        #expect(throws: StoreError.schemaMissing) { try SchemaCheck.verify(conn) }
        #expect(try Migrator.migrate(conn) == Int(Schema.currentVersion))
        #expect(try SchemaCheck.userVersion(conn) == Schema.currentVersion)
        try SchemaCheck.verify(conn)
        let tables = try conn.query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .map { try $0.string(0) }
        for table in ["inbox", "conversation", "member", "member_profile", "invite", "join_request",
                      "message", "conversation_local_state", "outbox", "change_log", "inbox_tombstone", "outbox_body"] {
            #expect(tables.contains(table), "missing \(table)")
        }
        #expect(try Migrator.migrate(conn) == 0)
    }

    @Test("a v1 file with rows migrates to v2 (inbox_tombstone) and keeps its rows")
    func migratesFromV1KeepingRows() throws {
        let f = try StoreFixture(seed: false)
        let conn = try SQLiteConnection.open(path: f.directory.databasePath, profile: .worker, create: true)
        try conn.immediateTransaction { () throws(StoreError) in
            try conn.execute(Schema.migrations[0].sql)
            try conn.execute("PRAGMA user_version = 1")
        }
        try f.seedInbox(on: conn)
        #expect(throws: StoreError.schemaMissing) { try SchemaCheck.verify(conn) }
        #expect(try Migrator.migrate(conn) == Int(Schema.currentVersion) - 1)
        try SchemaCheck.verify(conn)
        #expect(try conn.queryOne("SELECT count(*) FROM inbox")?.int64(0) == 1)
        #expect(try TombstoneWipeRepository.all(on: conn).isEmpty)
    }

    @Test("a v2 file with outbox rows migrates to v3 (state relayed): every row kept, the index and the cascade too")
    func migratesOutboxToV3KeepingRows() throws {
        let f = try StoreFixture(seed: false)
        let conn = try OlderSchemaFile.open(f.directory.databasePath, version: 2, rows: """
                INSERT INTO inbox(inboxId, clientId, createdAt) VALUES ('i1', 'c1', 1);
                INSERT INTO conversation(id, inboxId, clientId, topic, creatorInboxId, createdAt, state)
                    VALUES ('v1', 'i1', 'c1', '/t', 'i1', 1, 'active');
                INSERT INTO message(id, conversationId, senderInboxId, sentAt, receivedAt, contentType, content, isOutgoing, deliveryStatus)
                    VALUES ('m1', 'v1', 'i1', 1, 1, 't', x'00', 1, 'pending'), ('m2', 'v1', 'i1', 2, 2, 't', x'00', 1, 'failed');
                INSERT INTO outbox(messageId, memberInboxId, endpoint, payload, state, attempts, nextAttemptAt, lastError) VALUES
                    ('m1', 'a', 'unix:/a', x'0102', 'pending', 3, 77, 'connect: refused'),
                    ('m1', 'b', 'tcp:h:1', x'03', 'sent', 1, 5, NULL),
                    ('m2', 'a', 'unix:/a', x'04', 'failed', 2, 9, 'bad_signature');
                """)
        let before = try conn.query("SELECT * FROM outbox ORDER BY messageId, memberInboxId").map { try $0.string(0) + $0.string(1) + $0.string(4) }
        #expect(throws: StoreError.schemaMissing) { try SchemaCheck.verify(conn) }
        #expect(try Migrator.migrate(conn) == Int(Schema.currentVersion) - 2)  // v3 and every later step
        try SchemaCheck.verify(conn)
        #expect(try conn.query("SELECT * FROM outbox ORDER BY messageId, memberInboxId").map { try $0.string(0) + $0.string(1) + $0.string(4) } == before)
        let m1 = try OutboxRepository.items(messageId: "m1", on: conn)
        #expect(m1.map(\.payload) == [[1, 2], [3]])
        #expect(m1.map(\.attempts) == [3, 1])
        #expect(m1.map(\.lastError) == ["connect: refused", nil])
        #expect(try conn.queryOne("SELECT count(*) FROM sqlite_schema WHERE name = 'outbox_due'")?.int64(0) == 1)
        #expect(try conn.queryOne("SELECT count(*) FROM sqlite_schema WHERE name = 'outbox_v3'")?.int64(0) == 0)

        // The new state is accepted, garbage still is not, and the cascade from message holds.
        try conn.run("UPDATE outbox SET state = 'relayed' WHERE messageId = 'm1' AND memberInboxId = 'a'")
        #expect(try OutboxRepository.items(messageId: "m1", on: conn).first?.state == .relayed)
        #expect(throws: StoreError.self) { try conn.run("UPDATE outbox SET state = 'lost' WHERE messageId = 'm2'") }
        try conn.run("DELETE FROM message WHERE id = 'm1'")
        #expect(try conn.queryOne("SELECT count(*) FROM outbox")?.int64(0) == 1)
    }

    @Test("a v3 file with invites migrates to v4: each invite kept, open to several joins and not revoked")
    func migratesInvitesToV4() throws {
        let f = try StoreFixture(seed: false)
        let conn = try OlderSchemaFile.open(f.directory.databasePath, version: 3, rows: """
                INSERT INTO inbox(inboxId, clientId, createdAt) VALUES ('i1', 'c1', 1);
                INSERT INTO conversation(id, inboxId, clientId, topic, creatorInboxId, createdAt, state)
                    VALUES ('v1', 'i1', 'c1', '/t', 'i1', 1, 'active');
                INSERT INTO invite(id, conversationId, secret, createdAt, expiresAt) VALUES ('n1', 'v1', 's1', 5, NULL), ('n2', 'v1', 's2', 6, 99);
                """)
        #expect(try Migrator.migrate(conn) == Int(Schema.currentVersion) - 3)
        try SchemaCheck.verify(conn)
        let n1 = try #require(try InvitationWriter.invite(id: "n1", on: conn))
        #expect(n1 == DBInvite(id: "n1", conversationId: "v1", secret: "s1", createdAt: 5, expiresAt: nil))
        #expect(try InvitationWriter.invite(id: "n2", on: conn)?.expiresAt == 99)
        #expect(try InvitationWriter.revoke(inviteId: "n1", now: 7, on: conn))
        #expect(try !InvitationWriter.revoke(inviteId: "n1", now: 8, on: conn))
        #expect(try InvitationWriter.invite(id: "n1", on: conn)?.revokedAt == 7)
        #expect(throws: StoreError.self) { try conn.run("UPDATE invite SET singleUse = 2 WHERE id = 'n2'") }
    }

    @Test("a v4 file with pending pushes migrates to v5 (outbox_body): rows kept, one body per message, cascading from message")
    func migratesToV5KeepingRows() throws {
        let f = try StoreFixture(seed: false)
        let conn = try OlderSchemaFile.open(f.directory.databasePath, version: 4, rows: """
                INSERT INTO inbox(inboxId, clientId, createdAt) VALUES ('i1', 'c1', 1);
                INSERT INTO conversation(id, inboxId, clientId, topic, creatorInboxId, createdAt, state)
                    VALUES ('v1', 'i1', 'c1', '/t', 'i1', 1, 'active');
                INSERT INTO message(id, conversationId, senderInboxId, sentAt, receivedAt, contentType, content, isOutgoing, deliveryStatus)
                    VALUES ('m1', 'v1', 'i1', 1, 1, 't', x'00', 1, 'pending');
                INSERT INTO outbox(messageId, memberInboxId, endpoint, payload, state, attempts, nextAttemptAt)
                    VALUES ('m1', 'a', 'unix:/a', x'0102', 'pending', 2, 77);
                """)
        #expect(throws: StoreError.schemaMissing) { try SchemaCheck.verify(conn) }
        #expect(try Migrator.migrate(conn) == Int(Schema.currentVersion) - 4)
        try SchemaCheck.verify(conn)
        #expect(try OutboxRepository.items(messageId: "m1", on: conn).map(\.attempts) == [2])
        try conn.run("INSERT INTO outbox_body(messageId, bodyId, sealed) VALUES ('m1', 'b', x'01')")
        #expect(throws: StoreError.self) { try conn.run("INSERT INTO outbox_body(messageId, bodyId, sealed) VALUES ('m1', 'c', x'02')") }
        #expect(throws: StoreError.self) { try conn.run("INSERT INTO outbox_body(messageId, bodyId, sealed) VALUES ('nope', 'c', x'02')") }
        try conn.run("DELETE FROM message WHERE id = 'm1'")
        #expect(try conn.queryOne("SELECT count(*) FROM outbox_body")?.int64(0) == 0)
    }

    @Test func rawConnectionHasEveryPragma() throws {
        let f = try StoreFixture()
        let profile = ConnectionProfile.worker(environment: ["SOTTO_BUSY_TIMEOUT_MS": "1234"])
        #expect(profile.busyTimeoutMs == 1234)
        let conn = try f.open(profile: profile)
        let report = try PragmaReport.read(conn.handle)
        #expect(report == PragmaReport(
            journalMode: "wal", synchronous: 2, foreignKeys: true, secureDelete: true,
            journalSizeLimit: profile.journalSizeLimit, busyTimeoutMs: 1234, cacheSize: -256,
            mmapSize: 0, tempStore: 1, persistWAL: true))
    }

    @Test func busyTimeoutOverrideIgnoresGarbage() {
        #expect(ConnectionProfile.daemon(environment: ["SOTTO_BUSY_TIMEOUT_MS": "abc"]).busyTimeoutMs == 10_000)
        #expect(ConnectionProfile.worker(environment: ["SOTTO_BUSY_TIMEOUT_MS": "-5"]).busyTimeoutMs == 5_000)
        #expect(ConnectionProfile.worker(environment: [:]).busyTimeoutMs == 5_000)
    }

    @Test func walFileSurvivesTheLastClose() throws {
        let f = try StoreFixture()
        do {
            let conn = try f.open()
            _ = try conn.immediateTransaction { () throws(IncomingWriteError) in
                try IncomingMessageWriter.write(f.text("hello"), recipientInboxId: f.inboxId, topic: f.topic,
                                                now: f.now, on: conn)
            }
        }   // closed: every connection of this process is gone
        #expect(FileManager.default.fileExists(atPath: f.directory.databasePath + "-wal"))
        #expect(FileManager.default.fileExists(atPath: f.directory.databasePath + "-shm"))
    }

    @Test func notSQLiteIsCorrupt() throws {
        let tmp = try TemporaryDirectory()
        let path = tmp.path + "/shared.sqlite"
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try SQLiteConnection.open(path: path, profile: .worker)
        } throws: { error in
            // The extended code is kept and named: SQLITE_NOTADB, not "StoreError".
            guard case .corrupt(let code, _, _) = error as? StoreError else { return false }
            return SQLiteResultCode.name(code) == "SQLITE_NOTADB" && "\(error)".contains("damaged")
        }
    }

    @Test func missingFileIsIOWithoutCreate() throws {
        let tmp = try TemporaryDirectory()
        let path = tmp.path + "/absent.sqlite"
        #expect {
            _ = try SQLiteConnection.open(path: path, profile: .worker)
        } throws: { error in
            if case .io = error as? StoreError { return true }
            return false
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func newerSchemaIsRefusedCleanly() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        try conn.execute("PRAGMA user_version = 99")
        #expect(throws: StoreError.schemaTooNew(found: 99, known: Schema.currentVersion)) {
            try SchemaCheck.verify(conn)
        }
        #expect(throws: StoreError.schemaTooNew(found: 99, known: Schema.currentVersion)) {
            try Migrator.migrate(conn)
        }
        #expect(StoreError.schemaTooNew(found: 99, known: 1).isRetryable)
        #expect(try SchemaCheck.userVersion(conn) == 99)
    }

    @Test func rankingIsServedByTheIndex() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let plan = try conn.query("EXPLAIN QUERY PLAN " + InboxRankingRepository.rankedByActivitySQL, [.integer(10)])
            .map { try $0.string(3) }.joined(separator: "\n")
        #expect(plan.contains("inbox_by_activity"), "plan: \(plan)")
        #expect(!plan.contains("TEMP B-TREE"), "plan sorts: \(plan)")
        #expect(!plan.contains("message"), "plan: \(plan)")
    }
}
