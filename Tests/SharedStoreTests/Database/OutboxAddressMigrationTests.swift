import DaemonStore
import SharedStore
import SottoCrypto
import SottoWire
import Testing
import TestSupport

/// Schema v13 (issue #33, docs/adr/0075): the outbox row keeps its push's clientId and body id.
/// A v12 file's pending rows get them from their own payloads in the migration's transaction;
/// nothing else in the file changes.
@Suite("Schema v13: the outbox keeps each push's address")
struct OutboxAddressMigrationTests {
    // MARK: - A v12 file

    static let alice = SecureRandom.uuidV4(), bob = SecureRandom.uuidV4(), removed = SecureRandom.uuidV4()
    static let bodyId = Hex.encode(SecureRandom.bytes(16))
    static let topic = ProtocolIds.topic(conversationId: Hex.encode(SecureRandom.bytes(16)))

    static func push(_ clientId: String, topic: String? = nil, body: BodyHint? = nil) -> String {
        "x'" + Hex.encode(PushPayload(clientId: clientId, topic: topic, envelope: [1, 2, 3], body: body).encode()) + "'"
    }

    /// Pending pushes inline (to a relay and to a device), by reference, to a member removed
    /// since (its `member` row gone, as `sotto remove` leaves it), one whose payload is no
    /// push, and a push no longer pending.
    static let v12Rows = """
        INSERT INTO inbox(inboxId, clientId, createdAt) VALUES ('i1', 'c1', 1);
        INSERT INTO conversation(id, inboxId, clientId, topic, creatorInboxId, createdAt, state)
            VALUES ('v1', 'i1', 'c1', '/t', 'i1', 1, 'active');
        INSERT INTO member(conversationId, inboxId, publicKey, endpoint, clientId, role) VALUES
            ('v1', 'a', 'ka', 'nats://relay:4222', '\(alice)', 'member'),
            ('v1', 'b', 'kb', 'unix:/b', '\(bob)', 'member');
        INSERT INTO message(id, conversationId, senderInboxId, sentAt, receivedAt, contentType, content, isOutgoing, deliveryStatus)
            VALUES ('m1', 'v1', 'i1', 1, 1, 't', x'00', 1, 'pending'), ('m2', 'v1', 'i1', 2, 2, 't', x'00', 1, 'pending');
        INSERT INTO outbox_body(messageId, bodyId, sealed) VALUES ('m2', '\(bodyId)', x'0405');
        INSERT INTO outbox(messageId, memberInboxId, endpoint, payload, state, attempts, nextAttemptAt, lastError) VALUES
            ('m1', 'a', 'nats://relay:4222', \(push(alice)), 'pending', 3, 77, 'relay: timeout'),
            ('m1', 'b', 'unix:/b', \(push(bob, topic: topic)), 'pending', 0, 5, NULL),
            ('m1', 'gone', 'nats://relay:4222', \(push(removed)), 'pending', 1, 6, NULL),
            ('m1', 'junk', 'unix:/j', x'0102', 'pending', 0, 7, NULL),
            ('m2', 'a', 'nats://relay:4222', \(push(alice, body: BodyHint(id: bodyId, length: 4_112))), 'pending', 0, 8, NULL),
            ('m2', 'b', 'unix:/b', \(push(bob, topic: topic, body: BodyHint(id: bodyId, length: 4_112))), 'relayed', 1, 9, NULL);
        """

    /// Every row of every table, the outbox's with the columns it had at v12 only.
    static func dump(_ conn: SQLiteConnection) throws -> [String: [[SQLiteValue]]] {
        var out: [String: [[SQLiteValue]]] = [:]
        for table in try conn.query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").map({ try $0.string(0) }) {
            let columns = table == "outbox" ? "messageId, memberInboxId, endpoint, payload, state, attempts, nextAttemptAt, lastError" : "*"
            out[table] = try conn.query("SELECT \(columns) FROM \(table) ORDER BY 1").map(\.values)
        }
        return out
    }

    // MARK: - The migration

    @Test("a v12 file's pending pushes get their clientId and body id from their payloads; nothing else changes")
    func fillsPendingRows() throws {
        let f = try StoreFixture(seed: false)
        let conn = try OlderSchemaFile.open(f.directory.databasePath, version: 12, rows: Self.v12Rows)
        let before = try Self.dump(conn)
        #expect(throws: StoreError.schemaMissing) { try SchemaCheck.verify(conn) }

        #expect(try Migrator.migrate(conn) == 1)
        try SchemaCheck.verify(conn)
        #expect(try SchemaCheck.userVersion(conn) == 13)
        #expect(try Self.dump(conn) == before)

        let address = Dictionary(uniqueKeysWithValues: try conn.query(
            "SELECT messageId || '/' || memberInboxId, clientId, bodyId FROM outbox").map {
            (try $0.string(0), [try $0.optionalString(1), try $0.optionalString(2)])
        })
        #expect(address["m1/a"] == [Self.alice, nil])
        #expect(address["m1/b"] == [Self.bob, nil])
        #expect(address["m1/gone"] == [Self.removed, nil])       // no member row: the push still names it
        #expect(address["m1/junk"] == [nil, nil])                // no push: nothing to name (a relay fails it)
        #expect(address["m2/a"] == [Self.alice, Self.bodyId])    // by reference
        #expect(address["m2/b"] == [nil, nil])                   // relayed: never sent again
        let due = try OutboxRepository.due(now: 100, limit: 10, on: conn)
        #expect(due.count == 5)
        #expect(due.first { $0.messageId == "m2" }.map { [$0.clientId, $0.bodyId] } == [Self.alice, Self.bodyId])
    }

    @Test("a migrated file takes new pushes with their address, as the daemon writes them")
    func writerKeepsTheAddress() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let id = StoreFixture.randomHex(16)
        try conn.immediateTransaction { () throws(OutgoingWriteError) in
            try OutgoingMessageWriter.insert(
                OutgoingMessage(id: id, conversationId: f.conversationId, senderInboxId: f.inboxId, sentAtMs: f.now,
                                contentType: ContentType.text, content: [1], fallback: nil, referenceId: nil),
                pushes: [OutboxEntry(memberInboxId: f.sender.inboxId, endpoint: f.sender.endpoint,
                                     clientId: f.sender.clientId, bodyId: nil, payload: [1]),
                         OutboxEntry(memberInboxId: f.creator.inboxId, endpoint: f.creator.endpoint,
                                     clientId: f.creator.clientId, bodyId: Self.bodyId, payload: [2])],
                now: f.now, on: conn)
        }
        let items = try OutboxRepository.items(messageId: id, on: conn)
        let byMember = Dictionary(uniqueKeysWithValues: items.map { ($0.memberInboxId, $0) })
        #expect(byMember[f.sender.inboxId]?.clientId == f.sender.clientId)
        #expect(byMember[f.sender.inboxId]?.bodyId == nil)
        #expect(byMember[f.creator.inboxId]?.clientId == f.creator.clientId)
        #expect(byMember[f.creator.inboxId]?.bodyId == Self.bodyId)
    }
}
