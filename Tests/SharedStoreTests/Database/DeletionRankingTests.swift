import DaemonStore
import SharedStore
import SottoCrypto
import TestSupport
import Testing

@Suite("Store deletion, ranking, local state, outbox")
struct DeletionRankingTests {
    /// Rows per table that belong to `inboxId` (through its conversations).
    func rowsOf(_ inboxId: String, _ conn: SQLiteConnection) throws -> [Int64] {
        let byConversation = ["member", "member_profile", "invite", "join_request", "message",
                              "conversation_local_state", "change_log"]
        var out = [try conn.queryOne("SELECT count(*) FROM inbox WHERE inboxId = ?", [.text(inboxId)])!.int64(0),
                   try conn.queryOne("SELECT count(*) FROM conversation WHERE inboxId = ?", [.text(inboxId)])!.int64(0)]
        for table in byConversation {
            out.append(try conn.queryOne("""
                SELECT count(*) FROM \(table) WHERE conversationId IN (SELECT id FROM conversation WHERE inboxId = ?)
                """, [.text(inboxId)])!.int64(0))
        }
        out.append(try conn.queryOne("""
            SELECT count(*) FROM outbox WHERE messageId IN (SELECT m.id FROM message m
                JOIN conversation c ON c.id = m.conversationId WHERE c.inboxId = ?)
            """, [.text(inboxId)])!.int64(0))
        return out
    }

    /// Adds a second inbox with its own conversation, messages, invite and outbox rows.
    func populate(_ f: StoreFixture, _ conn: SQLiteConnection) throws {
        _ = try conn.immediateTransaction { () throws(IncomingWriteError) in
            try IncomingMessageWriter.write(f.text("hi"), recipientInboxId: f.inboxId, topic: f.topic, now: f.now, on: conn)
        }
        let newcomer = MemberEntry(inboxId: StoreFixture.randomHex(32), publicKey: "02" + StoreFixture.randomHex(32),
                                   endpoint: "unix:/n", clientId: SecureRandom.uuidV4())
        // Join requests are taken only on the creator's device: make this inbox the creator.
        try conn.run("UPDATE conversation SET creatorInboxId = inboxId WHERE id = ?", [.text(f.conversationId)])
        _ = try IncomingMessageWriter.write(
            f.message(kind: .joinRequest(inviteId: "aa", secret: "bb", profileName: nil, endpoint: "unix:/n",
                                         clientId: newcomer.clientId),
                      from: newcomer, contentType: "sotto/join_request:1.0"),
            recipientInboxId: f.inboxId, topic: f.topic, now: f.now, on: conn)
        try conn.run("INSERT INTO invite(id, conversationId, secret, createdAt) VALUES (?, ?, 's', 0)",
                     [.text(StoreFixture.randomHex(16)), .text(f.conversationId)])
        _ = try conn.immediateTransaction { () throws(OutgoingWriteError) in
            try OutgoingMessageWriter.insert(
                OutgoingMessage(id: StoreFixture.randomHex(16), conversationId: f.conversationId, senderInboxId: f.inboxId,
                                sentAtMs: f.now, contentType: "xmtp.org/text:1.0", content: [1], fallback: nil, referenceId: nil),
                pushes: [OutboxEntry(memberInboxId: f.sender.inboxId, endpoint: f.sender.endpoint,
                                     clientId: f.sender.clientId, bodyId: nil, payload: [9])],
                now: f.now, on: conn)
        }
    }

    @Test func deletionRemovesEveryRowOfThatInboxOnly() throws {
        let a = try StoreFixture()
        let conn = try a.open()
        let b = try StoreFixture(seed: false)   // only used for fresh ids
        try b.seedInbox(on: conn)
        try populate(a, conn)
        try populate(b, conn)
        let bBefore = try rowsOf(b.inboxId, conn)
        #expect(try rowsOf(a.inboxId, conn).allSatisfy { $0 > 0 })
        let seq = try conn.immediateTransaction { () throws(StoreError) in
            try InboxDeletion.delete(inboxId: a.inboxId, on: conn)
        }
        #expect(seq != nil)
        #expect(try rowsOf(a.inboxId, conn).allSatisfy { $0 == 0 })
        #expect(try conn.queryOne("SELECT count(*) FROM message WHERE conversationId = ?", [.text(a.conversationId)])?.int64(0) == 0)
        #expect(try rowsOf(b.inboxId, conn) == bBefore)
        let last = try ChangeLogRepository.since(seq: seq! - 1, limit: 5, on: conn)
        #expect(last.map(\.knownKind) == [.inboxDeleted])
        // Deleting again: nothing there, nothing written.
        #expect(try InboxDeletion.delete(inboxId: a.inboxId, on: conn) == nil)
    }

    @Test("deleting an inbox records its identity's tombstone in the same transaction; finish forgets it")
    func deletionLeavesATombstoneUntilFinished() throws {
        let a = try StoreFixture()
        let conn = try a.open()
        let tombstone = InboxTombstone(clientId: a.clientId, inboxId: a.inboxId)
        // A rolled-back deletion leaves neither the deletion nor the tombstone.
        try? conn.immediateTransaction { () throws(StoreError) in
            try InboxDeletion.delete(inboxId: a.inboxId, on: conn)
            throw StoreError.busy
        }
        #expect(try TombstoneWipeRepository.all(on: conn).isEmpty)
        #expect(try conn.queryOne("SELECT count(*) FROM inbox")?.int64(0) == 1)

        try conn.immediateTransaction { () throws(StoreError) in _ = try InboxDeletion.delete(inboxId: a.inboxId, on: conn) }
        #expect(try TombstoneWipeRepository.all(on: conn) == [tombstone])
        #expect(try TombstoneWipeRepository.find(inboxId: a.inboxId, on: conn) == tombstone)
        #expect(try TombstoneRepository.contains(clientId: a.clientId, on: conn))
        try InboxDeletion.finish(tombstone, on: conn)
        #expect(try TombstoneWipeRepository.all(on: conn).isEmpty)
        #expect(try !TombstoneRepository.contains(clientId: a.clientId, on: conn))
    }

    @Test func rankingIsMostRecentFirstNeverActiveLast() throws {
        let f = try StoreFixture(seed: false)
        let conn = try SQLiteConnection.open(path: f.directory.databasePath, profile: .worker, create: true)
        try Migrator.migrate(conn)
        let ids = (0..<4).map { _ in StoreFixture.randomHex(32) }
        try conn.immediateTransaction { () throws(InboxWriteError) in
            for id in ids { try InboxWriter.save(inboxId: id, clientId: SecureRandom.uuidV4(), now: 1, on: conn) }
        }
        try InboxWriter.touch(inboxId: ids[1], at: 100, on: conn)
        try InboxWriter.touch(inboxId: ids[2], at: 300, on: conn)
        try InboxWriter.touch(inboxId: ids[3], at: 200, on: conn)
        try InboxWriter.touch(inboxId: ids[3], at: 150, on: conn)   // never moves back
        let ranked = try InboxRankingRepository.rankedByActivity(limit: 10, on: conn).map(\.inboxId)
        #expect(ranked == [ids[2], ids[3], ids[1], ids[0]])
        #expect(try InboxRankingRepository.rankedByActivity(limit: 2, on: conn).count == 2)
    }

    @Test func localStateAndDeliveryStatus() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        #expect(throws: LocalStateWriteError.unknownConversation) {
            try LocalStateWriter.setMuted(true, conversationId: StoreFixture.randomHex(16), on: conn)
        }
        try LocalStateWriter.setMuted(true, conversationId: f.conversationId, on: conn)
        #expect(try OpenStateWriter.set(true, inboxId: f.inboxId, on: conn) == 1)
        guard case .written(let r) = try IncomingMessageWriter.write(f.text("x"), recipientInboxId: f.inboxId,
                                                                     topic: f.topic, now: f.now, on: conn) else {
            Issue.record("refused"); return
        }
        #expect(r.muted && r.isOpen && r.unreadCount == 1)   // unread always bumps, even muted
        try LocalStateWriter.markRead(conversationId: f.conversationId, at: f.now, on: conn)
        #expect(try LocalStateRepository.state(of: f.conversationId, on: conn)?.unreadCount == 0)

        let id = StoreFixture.randomHex(16)
        try OutgoingMessageWriter.insert(
            OutgoingMessage(id: id, conversationId: f.conversationId, senderInboxId: f.inboxId, sentAtMs: f.now,
                            contentType: "xmtp.org/text:1.0", content: [1], fallback: nil, referenceId: nil),
            pushes: [OutboxEntry(memberInboxId: f.sender.inboxId, endpoint: "e",
                                 clientId: f.sender.clientId, bodyId: nil, payload: [1]),
                     OutboxEntry(memberInboxId: f.creator.inboxId, endpoint: "e",
                                 clientId: f.creator.clientId, bodyId: nil, payload: [2])],
            now: f.now, on: conn)
        #expect(try OutboxRepository.due(now: f.now, limit: 10, on: conn).count == 2)
        try OutgoingMessageWriter.recordAttempt(messageId: id, memberInboxId: f.sender.inboxId, state: .sent,
                                                nextAttemptAt: f.now, lastError: nil, on: conn)
        #expect(try MessageRowRepository.find(id: id, on: conn)?.deliveryStatus == .pending)
        try OutgoingMessageWriter.recordAttempt(messageId: id, memberInboxId: f.creator.inboxId, state: .sent,
                                                nextAttemptAt: f.now, lastError: nil, on: conn)
        #expect(try MessageRowRepository.find(id: id, on: conn)?.deliveryStatus == .sent)
        let page = try MessageRowRepository.page(conversationId: f.conversationId, before: nil, limit: 10, on: conn)
        #expect(page.count == 2)
    }
}
