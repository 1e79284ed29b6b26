import DaemonStore
import SharedStore
import SottoCrypto
import TestSupport
import Testing
import SottoWire

/// `outbox_body` (schema v5, docs/adr/0032): one sealed body per outgoing message, kept while
/// any of its pushes is pending and deleted with the last one that is not.
@Suite("Outbox bodies in the database")
struct OutboxBodyStoreTests {
    func insertMessage(_ f: StoreFixture, on conn: SQLiteConnection, id: String = StoreFixture.randomHex(16)) throws -> String {
        let outgoing = OutgoingMessage(id: id, conversationId: f.conversationId, senderInboxId: f.inboxId, sentAtMs: f.now,
                                       contentType: ContentType.text, content: Array(repeating: 0x61, count: 9_000),
                                       fallback: nil, referenceId: nil)
        try conn.immediateTransaction { () throws(OutgoingWriteError) in
            try OutgoingMessageWriter.insert(outgoing, pushes: [
                OutboxEntry(memberInboxId: f.creator.inboxId, endpoint: f.creator.endpoint,
                            clientId: f.creator.clientId, bodyId: nil, payload: [1]),
                OutboxEntry(memberInboxId: f.sender.inboxId, endpoint: f.sender.endpoint,
                            clientId: f.sender.clientId, bodyId: nil, payload: [2]),
            ], now: f.now, on: conn)
            do throws(StoreError) {
                try OutboxBodyWriter.store(messageId: id, bodyId: String(repeating: "ab", count: 16),
                                           sealed: Array(repeating: 7, count: 8_208), on: conn)
            } catch { throw .store(error) }
        }
        return id
    }

    @Test("the body stays while a push is pending and goes with the last one that is not (sent, relayed or failed)")
    func releasedWithTheLastPush() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let id = try insertMessage(f, on: conn)
        #expect(try OutboxBodyRepository.body(messageId: id, on: conn)?.sealed.count == 8_208)

        try OutgoingMessageWriter.recordAttempt(messageId: id, memberInboxId: f.creator.inboxId, state: .sent,
                                                nextAttemptAt: f.now, lastError: nil, on: conn)
        #expect(try OutboxBodyWriter.releaseIfDone(messageId: id, on: conn) == false)
        try OutgoingMessageWriter.recordAttempt(messageId: id, memberInboxId: f.sender.inboxId, state: .pending,
                                                nextAttemptAt: f.now + 1_000, lastError: "connect: refused", on: conn)
        #expect(try OutboxBodyWriter.releaseIfDone(messageId: id, on: conn) == false)
        #expect(try OutboxBodyRepository.body(messageId: id, on: conn) != nil)

        try OutgoingMessageWriter.recordAttempt(messageId: id, memberInboxId: f.sender.inboxId, state: .failed,
                                                nextAttemptAt: f.now, lastError: "bad_signature", on: conn)
        #expect(try OutboxBodyWriter.releaseIfDone(messageId: id, on: conn))
        #expect(try OutboxBodyRepository.body(messageId: id, on: conn) == nil)
        #expect(try conn.queryOne("SELECT count(*) FROM message WHERE id = ?", [.text(id)])?.int64(0) == 1)
    }

    @Test("deleting the message (an explosion's cascade) deletes its body; one body per message")
    func cascadeAndOnePerMessage() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let id = try insertMessage(f, on: conn)
        #expect(throws: StoreError.self) {
            try OutboxBodyWriter.store(messageId: id, bodyId: String(repeating: "cd", count: 16), sealed: [1], on: conn)
        }
        try conn.run("DELETE FROM message WHERE id = ?", [.text(id)])
        #expect(try conn.queryOne("SELECT count(*) FROM outbox_body")?.int64(0) == 0)
    }
}
