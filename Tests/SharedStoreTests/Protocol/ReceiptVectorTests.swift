import DaemonStore
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Every case of docs/protocol/vectors/receipt-v1.json (made by a second implementation of
/// docs/protocol/receipts.md) through what the worker runs: payload, keystore, envelope,
/// signature, content, then `IncomingMessageWriter` on a real database where the vector's
/// recipient sent the `sent` messages to Alice. An accepted receipt moves exactly its
/// messages' pushes to Alice; a refused one changes no row.
@Suite("Receipt vectors")
struct ReceiptVectorTests {
    @Test("Receipt vector case", arguments: ReceiptVectors.caseNames)
    func receiptVectorCase(name: String) throws {
        let file = try ReceiptVectors.load()
        let vector = try #require(file.cases.first { $0.name == name })
        let rig = try ReceiptRig(file)
        defer { rig.temp.remove() }
        let before = try rig.outbox()

        let outcome = Result { () throws(PushError) -> IncomingWriteOutcome in
            let opened = try PushOpener.open(try PushPayload.decode(vector.payload), body: nil,
                                             identityForClientId: { (clientId) throws(KeystoreError) in
                                                 try rig.keystore.identity(clientId: clientId)
                                             }, topicForClientId: { _ in file.recipient.topic })
            guard case .receipt(let receipt) = opened.content else { throw PushError(.malformedMessage, "not a receipt") }
            #expect(receipt.encode().count > 0 && opened.contentBytes == vector.content)
            do {
                return try rig.conn.immediateTransaction { () throws(IncomingWriteError) in
                    try IncomingMessageWriter.write(IncomingMessage(opened), recipientInboxId: file.recipient.inboxId,
                                                    topic: opened.topic, now: 1_763_770_000_000, on: rig.conn)
                }
            } catch let error as IncomingWriteError {
                throw PushError(PushErrorCode(rawValue: error.protocolCode) ?? .internal, "\(error)")
            } catch {
                throw PushError(.internal, "\(error)")
            }
        }
        let after = try rig.outbox()
        switch (vector.expect, outcome) {
        case (.error(let code), .failure(let error)):
            #expect(error.code.rawValue == code, "\(name): \(error.detail)")
            #expect(after == before, "a refused receipt changes nothing")
        case (.error(let code), .success):
            Issue.record("\(name): expected \(code), the receipt was applied")
        case (.ok, .failure(let error)):
            Issue.record("\(name): expected the receipt applied, got \(error)")
        case (.ok(let delivered, let failed), .success(let written)):
            guard case .written(let receipt) = written else { Issue.record("\(name): not written"); return }
            #expect(!receipt.isUserVisible)
            for id in file.sent {
                let row = try #require(after[id])
                if delivered.contains(id) {
                    #expect(row.state == "delivered" && row.lastError == nil, "\(name) \(id)")
                } else if let failure = failed.first(where: { $0.messageId == id }) {
                    #expect(row.state == "failed" && row.lastError == ReceiptWriter.failureReason(failure.error), "\(name) \(id)")
                } else {
                    #expect(row == before[id], "\(name): \(id) is not in the receipt and stays as it was")
                }
            }
            #expect(try rig.conn.queryOne("SELECT count(*) FROM message WHERE contentType = ?", [.text(ContentType.receipt)])?.int64(0) == 0,
                    "a receipt is never stored as a message")
        }
    }

    @Test("The vectors cover every refusal and the largest receipt fits one push")
    func coverage() throws {
        let file = try ReceiptVectors.load()
        let codes = Set(file.cases.compactMap { if case .error(let code) = $0.expect { code } else { nil } })
        #expect(codes == ["malformed_message", "unknown_message", "unknown_sender"])
        let largest = try #require(file.cases.first { $0.name == "largest" })
        #expect(largest.payload.count <= PushPayload.maxBytes)
        guard case .ok(_, let failed) = largest.expect else { Issue.record("largest is refused"); return }
        #expect(failed.count == Receipt.maxEntries)
    }

    @Test("Receipt content: round trip, and the limits are the page's")
    func contentRoundTrip() throws {
        let ids = (0..<Receipt.maxEntries).map { _ in StoreFixture.randomHex(16) }
        let receipt = Receipt(delivered: Array(ids[0..<12]), failed: ids[12...].map { .init(messageId: $0, error: "body_missing") })
        #expect(try Receipt.decode(receipt.encode()) == receipt)
        #expect(throws: PushError.self) { try Receipt.decode(Receipt(delivered: ids + [StoreFixture.randomHex(16)]).encode()) }
        #expect(Receipt.isErrorCode("body_missing") && !Receipt.isErrorCode("") && !Receipt.isErrorCode("a b")
                && !Receipt.isErrorCode(String(repeating: "a", count: 33)))
    }
}

/// The vectors' recipient on a real database: its inbox and conversation (it is the
/// creator, Alice a member), one outgoing message per `sent` id with a push to Alice, half
/// of them already relayed.
private struct ReceiptRig {
    let temp: TemporaryDirectory
    let keystore: Keystore
    let conn: SQLiteConnection

    init(_ file: ReceiptVectors.File) throws {
        temp = try TemporaryDirectory()
        keystore = try Keystore(directory: temp.path + "/keystore", environment: [:], createIfMissing: true)
        try keystore.save(try file.recipient.identity())
        let group = GroupDirectory(path: temp.path + "/group")
        try group.create()
        conn = try SQLiteConnection.open(path: group.databasePath, profile: .worker, create: true)
        try Migrator.migrate(conn)
        let r = file.recipient
        let members = file.members.map {
            MemberEntry(inboxId: $0.inboxId, publicKey: $0.publicKey, endpoint: "unix:/tmp/\($0.profileName).sock",
                        clientId: $0.inboxId == r.inboxId ? r.clientId : SecureRandom.uuidV4(), profileName: $0.profileName)
        }
        let alice = try #require(members.first { $0.inboxId != r.inboxId })
        let now: Int64 = 1_763_760_000_000
        let conn = self.conn
        try conn.immediateTransaction { () throws(InboxWriteError) in
            try InboxWriter.save(inboxId: r.inboxId, clientId: r.clientId, now: now, on: conn)
            try InboxWriter.createConversation(
                NewConversation(id: r.conversationId, inboxId: r.inboxId, name: "Vectors", creatorInboxId: r.inboxId,
                                state: .active, createdAt: now, members: members), on: conn)
        }
        for (index, id) in file.sent.enumerated() {
            try conn.immediateTransaction { () throws(OutgoingWriteError) in
                try OutgoingMessageWriter.insert(
                    OutgoingMessage(id: id, conversationId: r.conversationId, senderInboxId: r.inboxId, sentAtMs: now + Int64(index),
                                    contentType: ContentType.text, content: Array("m\(index)".utf8), fallback: nil, referenceId: nil),
                    pushes: [OutboxEntry(memberInboxId: alice.inboxId, endpoint: alice.endpoint,
                                         clientId: alice.clientId, bodyId: nil, payload: [0x7b, 0x7d])],
                    now: now, on: conn)
                if index % 2 == 0 {
                    try OutgoingMessageWriter.recordAttempt(messageId: id, memberInboxId: alice.inboxId, state: .relayed,
                                                            nextAttemptAt: now, lastError: nil, on: conn)
                }
            }
        }
    }

    struct Row: Equatable {
        let state: String
        let lastError: String?
    }

    func outbox() throws -> [String: Row] {
        var out: [String: Row] = [:]
        for row in try conn.query("SELECT messageId, state, lastError FROM outbox") {
            out[try row.string(0)] = Row(state: try row.string(1), lastError: try row.optionalString(2))
        }
        return out
    }
}
