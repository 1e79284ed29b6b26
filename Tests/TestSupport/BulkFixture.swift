import Foundation
import SharedStore
import SottoCrypto

/// Large synthetic databases for benchmarks, written straight into the tables in one
/// transaction (the writers' per-message checks would dominate a million-row fixture): the
/// SQL stays here, in test support, not in the benchmarks.
///
/// ```swift
/// try db.write { conn in
///     try BulkFixture.insertInboxes(10_000, lastActivityFrom: base, on: conn)
///     try BulkFixture.insertMessages(1_000_000, across: 10_000, sentFrom: base, on: conn)
/// }
/// ```
public enum BulkFixture {
    /// The inbox id of inbox number `index` (64 hex digits).
    public static func inboxId(_ index: Int) -> String { String(format: "%064x", index) }

    /// `count` inboxes, one active conversation each (conversation id = `index` in 32 hex
    /// digits); inbox `index` was last active at `lastActivityFrom - index`.
    public static func insertInboxes(_ count: Int, lastActivityFrom base: Int64, on conn: SQLiteConnection) throws {
        let inbox = try conn.prepare("INSERT INTO inbox(inboxId, clientId, createdAt, lastActivityAt) VALUES (?, ?, ?, ?)")
        let conversation = try conn.prepare("""
            INSERT INTO conversation(id, inboxId, clientId, topic, creatorInboxId, createdAt, state)
            VALUES (?, ?, ?, ?, ?, ?, 'active')
            """)
        for index in 0..<count {
            let inboxId = inboxId(index)
            let clientId = SecureRandom.uuidV4()
            let conversationId = String(format: "%032x", index)
            try inbox.bind([.text(inboxId), .text(clientId), .integer(base), .integer(base - Int64(index))])
            while try inbox.step() {}
            try conversation.bind([.text(conversationId), .text(inboxId), .text(clientId),
                                   .text(DBConversation.topic(for: conversationId)), .text(inboxId), .integer(base)])
            while try conversation.step() {}
        }
    }

    /// `count` short text messages spread round-robin over the conversations of
    /// ``insertInboxes(_:lastActivityFrom:on:)``, sent one millisecond apart from `sentFrom`.
    public static func insertMessages(_ count: Int, across inboxes: Int, sentFrom base: Int64,
                                      on conn: SQLiteConnection) throws {
        let message = try conn.prepare("""
            INSERT INTO message(id, conversationId, senderInboxId, sentAt, receivedAt, contentType, content)
            VALUES (?, ?, ?, ?, ?, 'xmtp.org/text:1.0', ?)
            """)
        let content: [UInt8] = Array("a message of ordinary length, sixty-some bytes in all".utf8)
        for index in 0..<count {
            let owner = index % inboxes
            try message.bind([.text(String(format: "%032x", index)), .text(String(format: "%032x", owner)),
                              .text(inboxId(owner)), .integer(base + Int64(index)),
                              .integer(base + Int64(index)), .blob(content)])
            while try message.step() {}
        }
    }
}
