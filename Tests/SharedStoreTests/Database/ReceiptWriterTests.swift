import DaemonStore
import SharedStore
import SottoCrypto
import TestSupport
import Testing
import SottoWire

/// The store's side of delivery receipts (docs/protocol/receipts.md) on a real database: what
/// the worker records as owed, and what a received receipt does to the outbox.
@Suite("Receipt writer")
struct ReceiptWriterTests {
    @Test("a stored text owes its sender a receipt; a receipt, a duplicate and a conversation with receipts off owe none")
    func whatIsOwed() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let text = f.text("hello")
        try write(text, f, conn)
        try write(text, f, conn)  // the duplicate
        #expect(try due(conn) == ["\(text.id) \(f.sender.inboxId) delivered"])

        // A receipt is applied, never owed a receipt (here: for a message this device sent).
        let mine = try outgoing(f, conn)
        try write(f.message(kind: .receipt(Receipt(delivered: [mine])), from: f.sender, contentType: ContentType.receipt), f, conn)
        #expect(try due(conn).count == 1)

        try conn.run("UPDATE conversation_local_state SET receipts = 0 WHERE conversationId = ?", [.text(f.conversationId)])
        try write(f.text("quiet"), f, conn)
        #expect(try due(conn).count == 1, "off: nothing owed")
    }

    @Test("a receipt that overtakes the ack keeps the push delivered; a later failed entry cannot undo it; another member's push is untouched")
    func deliveredStays() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let mine = try outgoing(f, conn)
        try write(f.message(kind: .receipt(Receipt(delivered: [mine])), from: f.sender, contentType: ContentType.receipt), f, conn)
        #expect(try state(mine, f.sender.inboxId, conn) == "delivered")
        #expect(try state(mine, f.creator.inboxId, conn) == "pending")

        // The outbox's own attempt lands after the receipt: still delivered.
        try conn.immediateTransaction { () throws(OutgoingWriteError) in
            try OutgoingMessageWriter.recordAttempt(messageId: mine, memberInboxId: f.sender.inboxId, state: .sent,
                                                    nextAttemptAt: f.now, lastError: nil, on: conn)
        }
        #expect(try state(mine, f.sender.inboxId, conn) == "delivered")
        try write(f.message(kind: .receipt(Receipt(delivered: [], failed: [.init(messageId: mine, error: "body_missing")])),
                            from: f.sender, contentType: ContentType.receipt), f, conn)
        #expect(try state(mine, f.sender.inboxId, conn) == "delivered")

        // The creator's failed entry: failed with the code, and the message's status follows.
        try conn.immediateTransaction { () throws(OutgoingWriteError) in
            try OutgoingMessageWriter.recordAttempt(messageId: mine, memberInboxId: f.creator.inboxId, state: .relayed,
                                                    nextAttemptAt: f.now, lastError: nil, on: conn)
        }
        try write(f.message(kind: .receipt(Receipt(delivered: [], failed: [.init(messageId: mine, error: "body_missing")])),
                            from: f.creator, contentType: ContentType.receipt), f, conn)
        #expect(try state(mine, f.creator.inboxId, conn) == "failed")
        #expect(try conn.queryOne("SELECT lastError FROM outbox WHERE messageId = ? AND memberInboxId = ?",
                                  [.text(mine), .text(f.creator.inboxId)])?.optionalString(0) == ReceiptWriter.failureReason("body_missing"))
        #expect(try conn.queryOne("SELECT deliveryStatus FROM message WHERE id = ?", [.text(mine)])?.string(0) == "failed")
    }

    @Test("a receipt for an incoming message (not ours) is unknown_message, nothing written")
    func notOurs() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let text = f.text("from the sender")
        try write(text, f, conn)
        let before = try DatabaseDump.tables(path: f.directory.databasePath)
        #expect(throws: IncomingWriteError.unknownMessage("the receipt names a message this device did not send to its signer")) {
            try write(f.message(kind: .receipt(Receipt(delivered: [text.id])), from: f.creator, contentType: ContentType.receipt), f, conn)
        }
        #expect(try DatabaseDump.tables(path: f.directory.databasePath) == before)
    }

    // MARK: - Helpers

    private func write(_ m: IncomingMessage, _ f: StoreFixture, _ conn: SQLiteConnection) throws {
        _ = try conn.immediateTransaction { () throws(IncomingWriteError) in
            try IncomingMessageWriter.write(m, recipientInboxId: f.inboxId, topic: f.topic, now: f.now, on: conn)
        }
    }

    /// One of our messages with a pending push to the sender and one to the creator.
    private func outgoing(_ f: StoreFixture, _ conn: SQLiteConnection) throws -> String {
        let id = StoreFixture.randomHex(16)
        try conn.immediateTransaction { () throws(OutgoingWriteError) in
            try OutgoingMessageWriter.insert(
                OutgoingMessage(id: id, conversationId: f.conversationId, senderInboxId: f.inboxId, sentAtMs: f.now,
                                contentType: ContentType.text, content: Array("mine".utf8), fallback: nil, referenceId: nil),
                pushes: [f.sender, f.creator].map { OutboxEntry(memberInboxId: $0.inboxId, endpoint: $0.endpoint,
                                                                clientId: $0.clientId, bodyId: nil, payload: [1]) },
                now: f.now, on: conn)
        }
        return id
    }

    private func due(_ conn: SQLiteConnection) throws -> [String] {
        try conn.query("SELECT messageId, senderInboxId, status FROM receipt_due ORDER BY createdAt, messageId").map {
            "\(try $0.string(0)) \(try $0.string(1)) \(try $0.string(2))"
        }
    }

    private func state(_ messageId: String, _ member: String, _ conn: SQLiteConnection) throws -> String? {
        try conn.queryOne("SELECT state FROM outbox WHERE messageId = ? AND memberInboxId = ?", [.text(messageId), .text(member)])?.string(0)
    }
}
