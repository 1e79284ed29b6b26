import DaemonStore
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Content sealed per conversation in the shared store (docs/adr/0052), on a real file with
/// the worker's writers: what is on disk is sealed, what is read is plaintext, and a cell
/// that does not open is reported, never shown.
@Suite("Sealed content in the store")
struct SealedContentStoreTests {
    /// A fixture whose inbox has a database key, seeded through a keyed connection.
    struct Sealed {
        let f: StoreFixture
        let databaseKey = SecretBytes(SecureRandom.bytes(32))
        let keys: ContentKeyring
        let conn: SQLiteConnection

        init() throws {
            f = try StoreFixture(seed: false)
            let conn = try SQLiteConnection.open(path: f.directory.databasePath, profile: .worker, create: true)
            try Migrator.migrate(conn)
            let (inboxId, databaseKey) = (f.inboxId, databaseKey)
            keys = ContentKeyring { $0 == inboxId ? databaseKey : nil }
            conn.contentKeys = keys
            try f.seedInbox(on: conn)
            self.conn = conn
        }

        func write(_ m: IncomingMessage) throws -> IncomingWriteOutcome {
            try conn.immediateTransaction { () throws(IncomingWriteError) in
                try IncomingMessageWriter.write(m, recipientInboxId: f.inboxId, topic: f.topic, now: f.now, on: conn)
            }
        }

        func raw(_ sql: String, _ binds: [SQLiteValue] = []) throws -> SQLiteValue {
            try #require(try conn.queryOne(sql, binds)).values[0]
        }
    }

    static func isSealed(_ value: SQLiteValue) -> Bool {
        if case .blob(let bytes) = value { return ConversationContentKey.looksSealed(bytes) }
        return false
    }

    @Test("a stored text, its fallback, the conversation's name and the profile names are sealed on disk and read back")
    func writesSealReadsOpen() throws {
        let s = try Sealed()
        let m = s.f.text("north gate at nine")
        guard case .written(let receipt) = try s.write(m) else { Issue.record("not written"); return }
        #expect(receipt.conversationName == "Trip")
        #expect(receipt.senderProfileName == "Sender")
        #expect(Self.isSealed(try s.raw("SELECT content FROM message WHERE id = ?", [.text(m.id)])))
        #expect(Self.isSealed(try s.raw("SELECT name FROM conversation")))
        for row in try s.conn.query("SELECT name FROM member_profile") { #expect(Self.isSealed(row.values[0])) }
        let read = try #require(try MessageRowRepository.find(id: m.id, on: s.conn))
        #expect(read.content == Array("north gate at nine".utf8))
        #expect(!read.isUnreadable)
        #expect(try ConversationRepository.find(id: s.f.conversationId, on: s.conn)?.name == "Trip")
        #expect(try MemberNamesRepository.profileNames(of: s.f.conversationId, on: s.conn).values.sorted() == ["Creator", "Me", "Sender"])
    }

    @Test("with no key for the conversation a write is refused and nothing is written (never plaintext instead)")
    func noKeyNoWrite() throws {
        let s = try Sealed()
        s.conn.contentKeys = ContentKeyring()   // knows no identity
        let before = try rowCounts(s.conn)
        #expect(throws: IncomingWriteError.self) { try s.write(s.f.text("should not land")) }
        #expect(try rowCounts(s.conn) == before)
    }

    @Test("a cell moved to another row, a plaintext cell and garbage read as unreadable, never as text")
    func hostileCells() throws {
        let s = try Sealed()
        let a = s.f.text("first"), b = s.f.text("second")
        _ = try s.write(a)
        _ = try s.write(b)
        let moved = try s.raw("SELECT content FROM message WHERE id = ?", [.text(a.id)])
        let garbage: [SQLiteValue] = [moved, .text("plain text someone wrote in"), .blob([]), .blob([0x01, 0x02]),
                                      .blob([0x02] + SecureRandom.bytes(60)), .integer(7)]
        for value in garbage {
            try s.conn.run("UPDATE message SET content = ? WHERE id = ?", [value, .text(b.id)])
            let read = try #require(try MessageRowRepository.find(id: b.id, on: s.conn))
            #expect(read.isUnreadable, "\(value)")
            #expect(read.content.isEmpty)
        }
        #expect(try MessageRowRepository.find(id: a.id, on: s.conn)?.content == Array("first".utf8))
        try s.conn.run("UPDATE conversation SET name = ?", [.text("Trip")])
        #expect(try ConversationRepository.find(id: s.f.conversationId, on: s.conn)?.name == nil)
    }

    @Test("once the keyring forgets the inbox and its identity is gone, nothing opens")
    func forgottenKey() throws {
        let s = try Sealed()
        let m = s.f.text("gone with the key")
        _ = try s.write(m)
        let cell = try s.raw("SELECT content FROM message WHERE id = ?", [.text(m.id)])
        s.keys.forget(inboxId: s.f.inboxId)
        #expect(s.keys.heldKeyCount == 0)
        s.conn.contentKeys = ContentKeyring()   // the identity is deleted: the lookup finds nothing
        #expect(try MessageRowRepository.find(id: m.id, on: s.conn)?.isUnreadable == true)
        guard case .blob(let bytes) = cell else { Issue.record("not a blob"); return }
        let otherKey = ConversationContentKey(databaseKey: SecretBytes(SecureRandom.bytes(32)), conversationId: s.f.conversationId)
        #expect(throws: SealedCellError.authenticationFailed) {
            try otherKey.open(bytes, at: SealedColumn.messageContent.address(rowId: m.id))
        }
    }

    @Test("v9 → v10 seals every plaintext cell of a conversation whose key it gets, and leaves one it cannot")
    func migrationSeals() throws {
        let tmp = try TemporaryDirectory()
        let path = tmp.path + "/shared.sqlite"
        let (known, unknown) = (StoreFixture.randomHex(16), StoreFixture.randomHex(16))
        let (inboxA, inboxB) = (StoreFixture.randomHex(32), StoreFixture.randomHex(32))
        let conn = try OlderSchemaFile.open(path, version: 9, rows: """
            INSERT INTO inbox(inboxId, clientId, createdAt) VALUES ('\(inboxA)', 'ca', 1), ('\(inboxB)', 'cb', 1);
            INSERT INTO conversation(id, inboxId, clientId, topic, name, creatorInboxId, createdAt, state)
                VALUES ('\(known)', '\(inboxA)', 'ca', 't1', 'Known trip', '\(inboxA)', 1, 'active'),
                       ('\(unknown)', '\(inboxB)', 'cb', 't2', 'Other trip', '\(inboxB)', 1, 'active');
            INSERT INTO member_profile(conversationId, inboxId, name) VALUES ('\(known)', '\(inboxA)', 'Ann Profile');
            INSERT INTO message(id, conversationId, senderInboxId, sentAt, receivedAt, contentType, content, fallback)
                VALUES ('m1', '\(known)', '\(inboxA)', 1, 1, 'xmtp.org/text:1.0', CAST('v9 plaintext' AS BLOB), 'a fallback'),
                       ('m2', '\(unknown)', '\(inboxB)', 1, 1, 'xmtp.org/text:1.0', CAST('left as is' AS BLOB), NULL);
            INSERT INTO join_request(conversationId, inviteId, secret, requesterInboxId, requesterPublicKey, profileName,
                endpoint, clientId, messageId, receivedAt) VALUES ('\(known)', 'i', 's', 'r', 'p', 'Joiner Name', 'e', 'c', 'j1', 1);
            INSERT INTO roster_rename(conversationId, inboxId, profileName, receivedAt) VALUES ('\(known)', 'r2', 'New Name', 1);
            INSERT INTO roster_pending(conversationId, base, messageId, content, receivedAt)
                VALUES ('\(known)', 3, 'd1', CAST('{"delta":"names"}' AS BLOB), 1);
            """)
        let databaseKey = SecretBytes(SecureRandom.bytes(32))
        conn.contentKeys = ContentKeyring { $0 == inboxA ? databaseKey : nil }
        #expect(try Migrator.migrate(conn) == Int(Schema.currentVersion) - 9)  // v10 and every later step
        #expect(try SchemaCheck.userVersion(conn) == Schema.currentVersion)
        for column in SealedColumn.allCases {
            for row in try conn.query("""
                SELECT \(column.column) FROM \(column.table) WHERE \(column.conversationIdColumn) = ? AND \(column.column) IS NOT NULL
                """, [.text(known)]) {
                #expect(Self.isSealed(row.values[0]), "\(column) not sealed")
            }
        }
        #expect(try MessageRowRepository.find(id: "m1", on: conn)?.content == Array("v9 plaintext".utf8))
        #expect(try MessageRowRepository.find(id: "m1", on: conn)?.fallback == "a fallback")
        #expect(try ConversationRepository.find(id: known, on: conn)?.name == "Known trip")
        #expect(try MemberNamesRepository.profileName(conversationId: known, inboxId: inboxA, on: conn) == "Ann Profile")
        // The conversation whose identity it could not open: as it was, and reported unreadable.
        #expect(try conn.queryOne("SELECT content FROM message WHERE id = 'm2'")?.values[0] == .blob(Array("left as is".utf8)))
        #expect(try MessageRowRepository.find(id: "m2", on: conn)?.isUnreadable == true)
    }
}
