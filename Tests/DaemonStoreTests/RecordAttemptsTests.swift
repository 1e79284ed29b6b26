import DaemonStore
import SharedStore
import SottoCrypto
import TestSupport
import Testing
import SottoWire

/// `OutgoingMessageWriter.recordAttempts` (docs/adr/0041): a window of push outcomes in one
/// transaction, each message's status and change once.
@Suite("Outbox: recording a window of attempts")
struct RecordAttemptsTests {
    func insert(_ f: StoreFixture, on conn: SQLiteConnection) throws -> String {
        let id = StoreFixture.randomHex(16)
        let outgoing = OutgoingMessage(id: id, conversationId: f.conversationId, senderInboxId: f.inboxId, sentAtMs: f.now,
                                       contentType: ContentType.text, content: Array("hi".utf8), fallback: nil, referenceId: nil)
        try conn.immediateTransaction { () throws(OutgoingWriteError) in
            try OutgoingMessageWriter.insert(outgoing, pushes: [
                OutboxEntry(memberInboxId: f.creator.inboxId, endpoint: f.creator.endpoint,
                            clientId: f.creator.clientId, bodyId: nil, payload: [1]),
                OutboxEntry(memberInboxId: f.sender.inboxId, endpoint: f.sender.endpoint,
                            clientId: f.sender.clientId, bodyId: nil, payload: [2]),
            ], now: f.now, on: conn)
        }
        return id
    }

    func status(_ id: String, _ conn: SQLiteConnection) throws -> String? {
        try conn.queryOne("SELECT deliveryStatus FROM message WHERE id = ?", [.text(id)])?.string(0)
    }

    func changes(_ id: String, _ conn: SQLiteConnection) throws -> Int64 {
        try conn.queryOne("SELECT count(*) FROM change_log WHERE kind = ? AND entityId = ?",
                          [.text(ChangeKind.messageStatusChanged.rawValue), .text(id)])?.int64(0) ?? -1
    }

    @Test("two messages' pushes in one call: each row recorded, each status recomputed, one change per message")
    func oneChangePerMessage() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let a = try insert(f, on: conn)
        let b = try insert(f, on: conn)
        let attempts = [
            RecordedAttempt(messageId: a, memberInboxId: f.creator.inboxId, state: .relayed, nextAttemptAt: f.now, lastError: nil),
            RecordedAttempt(messageId: a, memberInboxId: f.sender.inboxId, state: .sent, nextAttemptAt: f.now, lastError: nil),
            RecordedAttempt(messageId: b, memberInboxId: f.creator.inboxId, state: .pending, nextAttemptAt: f.now + 1_000,
                            lastError: "relay: no ack"),
            RecordedAttempt(messageId: b, memberInboxId: f.sender.inboxId, state: .failed, nextAttemptAt: f.now,
                            lastError: "bad_signature"),
        ]
        let changed = try conn.immediateTransaction { () throws(OutgoingWriteError) in
            try OutgoingMessageWriter.recordAttempts(attempts, on: conn)
        }
        #expect(changed == [a, b])
        #expect(try status(a, conn) == "sent")
        #expect(try status(b, conn) == "pending")
        #expect(try changes(a, conn) == 1)
        #expect(try changes(b, conn) == 1)
        let rows = try conn.query("SELECT state, attempts, lastError FROM outbox WHERE messageId = ? ORDER BY memberInboxId = ?",
                                  [.text(b), .text(f.sender.inboxId)])
        #expect(try rows.map { try $0.string(0) } == ["pending", "failed"])
        #expect(try rows.map { try $0.int64(1) } == [1, 1])
        #expect(try rows[0].string(2) == "relay: no ack")
    }

    @Test("a push a receipt already marked delivered (the receipt overtook the ack) stays delivered when its attempt is recorded")
    func deliveredStaysDelivered() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let a = try insert(f, on: conn)
        _ = try conn.run("UPDATE outbox SET state = 'delivered' WHERE messageId = ? AND memberInboxId = ?",
                         [.text(a), .text(f.creator.inboxId)])
        _ = try conn.immediateTransaction { () throws(OutgoingWriteError) in
            try OutgoingMessageWriter.recordAttempts([
                RecordedAttempt(messageId: a, memberInboxId: f.creator.inboxId, state: .sent, nextAttemptAt: f.now, lastError: "late"),
                RecordedAttempt(messageId: a, memberInboxId: f.sender.inboxId, state: .sent, nextAttemptAt: f.now, lastError: nil),
            ], on: conn)
        }
        let rows = try conn.query("SELECT state, lastError FROM outbox WHERE messageId = ? ORDER BY memberInboxId = ?",
                                  [.text(a), .text(f.sender.inboxId)])
        #expect(try rows.map { try $0.string(0) } == ["delivered", "sent"])
        #expect(try rows[0].optionalString(1) == nil)
        #expect(try status(a, conn) == "sent")
    }

    @Test("a push whose row is gone (its conversation exploded meanwhile) is skipped, nothing else changes; nothing at all is no change")
    func goneRowsAreSkipped() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let a = try insert(f, on: conn)
        let gone = StoreFixture.randomHex(16)
        let changed = try conn.immediateTransaction { () throws(OutgoingWriteError) in
            try OutgoingMessageWriter.recordAttempts([
                RecordedAttempt(messageId: gone, memberInboxId: f.creator.inboxId, state: .relayed, nextAttemptAt: f.now, lastError: nil),
                RecordedAttempt(messageId: a, memberInboxId: StoreFixture.randomHex(32), state: .relayed, nextAttemptAt: f.now,
                                lastError: nil),
            ], on: conn)
        }
        #expect(changed.isEmpty)
        #expect(try status(a, conn) == "pending")
        #expect(try changes(a, conn) == 0)
        #expect(try changes(gone, conn) == 0)
        #expect(try conn.immediateTransaction { () throws(OutgoingWriteError) in
            try OutgoingMessageWriter.recordAttempts([], on: conn)
        }.isEmpty)
    }
}
