import DaemonStore
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Every case of docs/protocol/vectors/join-refusal-v1.json (made by a second implementation
/// of docs/protocol/join-refusal.md) through what the worker runs: payload, keystore,
/// envelope, signature, content, then `IncomingMessageWriter` on a real database where the
/// vector's recipient waits on its join request. An accepted refusal is one `join_refusal` row
/// with the reason from the closed set and no message; a refused one changes no row.
@Suite("Join refusal vectors")
struct JoinRefusalVectorTests {
    @Test("Join refusal vector case", arguments: JoinRefusalVectors.caseNames)
    func joinRefusalVectorCase(name: String) throws {
        let file = try JoinRefusalVectors.load()
        let vector = try #require(file.cases.first { $0.name == name })
        let rig = try PendingJoinRig(file)
        defer { rig.temp.remove() }
        let before = try rig.snapshot()

        let outcome = Result { () throws(PushError) -> IncomingWriteOutcome in
            let opened = try PushOpener.open(try PushPayload.decode(vector.payload), body: nil,
                                             identityForClientId: { (clientId) throws(KeystoreError) in
                                                 try rig.keystore.identity(clientId: clientId)
                                             }, topicForClientId: { _ in file.recipient.topic })
            #expect(opened.contentBytes == vector.content)
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
        let after = try rig.snapshot()
        switch (vector.expect, outcome) {
        case (.error(let code), .failure(let error)):
            #expect(error.code.rawValue == code, "\(name): \(error.detail)")
            #expect(after == before, "a refused refusal changes nothing")
        case (.error(let code), .success):
            Issue.record("\(name): expected \(code), the refusal was recorded")
        case (.ok, .failure(let error)):
            Issue.record("\(name): expected the refusal recorded, got \(error)")
        case (.ok(let reason), .success(let written)):
            guard case .written(let receipt) = written else { Issue.record("\(name): not written"); return }
            #expect(receipt.isUserVisible, "the user is told")
            #expect(after.refusals == ["\(file.joinRequestId) \(file.recipient.conversationId) \(reason)"])
            #expect(after.messages == before.messages, "a refusal is never stored as a message")
            #expect(JoinRefusal.Reason(rawValue: reason) != nil, "the shown reason is from the closed set")
        }
    }

    @Test("The vectors cover every refusal code and every reason")
    func coverage() throws {
        let file = try JoinRefusalVectors.load()
        let codes = Set(file.cases.compactMap { if case .error(let code) = $0.expect { code } else { nil } })
        #expect(codes == ["malformed_message", "unknown_message", "unknown_sender"])
        let reasons = Set(file.cases.compactMap { if case .ok(let reason) = $0.expect { reason } else { nil } })
        #expect(reasons == Set(JoinRefusal.Reason.allCases.map(\.rawValue)))
    }

    @Test("Join refusal content: round trip; an unknown reason is other; garbage is malformed")
    func contentRoundTrip() throws {
        let id = StoreFixture.randomHex(16)
        for reason in JoinRefusal.Reason.allCases {
            #expect(try JoinRefusal.decode(JoinRefusal(joinRequestId: id, reason: reason).encode()) == JoinRefusal(joinRequestId: id, reason: reason))
        }
        #expect(String(decoding: JoinRefusal(joinRequestId: id, reason: .usedUp).encode(), as: UTF8.self)
                == "{\"joinRequestId\":\"\(id)\",\"reason\":\"used_up\"}")
        #expect(try JoinRefusal.decode(Array("{\"joinRequestId\":\"\(id)\",\"reason\":\"later\"}".utf8)).reason == .other)
        #expect(throws: PushError.self) { try JoinRefusal.decode(Array("{\"joinRequestId\":\"\(id)\",\"reason\":\"a b\"}".utf8)) }
    }
}

/// The vectors' recipient on a real database: its inbox and the conversation it waits to join
/// (`pendingJoin`, Cora the creator), and the join request it sent to Cora.
private struct PendingJoinRig {
    let temp: TemporaryDirectory
    let keystore: Keystore
    let conn: SQLiteConnection

    init(_ file: JoinRefusalVectors.File) throws {
        temp = try TemporaryDirectory()
        keystore = try Keystore(directory: temp.path + "/keystore", environment: [:], createIfMissing: true)
        let identity = try file.recipient.identity()
        try keystore.save(identity)
        let group = GroupDirectory(path: temp.path + "/group")
        try group.create()
        conn = try SQLiteConnection.open(path: group.databasePath, profile: .worker, create: true)
        try Migrator.migrate(conn)
        conn.contentKeys = ContentKeyring { _ in identity.databaseKey }
        let r = file.recipient
        let members = file.members.map {
            MemberEntry(inboxId: $0.inboxId, publicKey: $0.publicKey, endpoint: "unix:/tmp/\($0.profileName).sock",
                        clientId: $0.inboxId == r.inboxId ? r.clientId : SecureRandom.uuidV4(),
                        profileName: $0.inboxId == r.inboxId ? $0.profileName : nil)
        }
        let cora = try #require(members.first { $0.inboxId == file.creatorInboxId })
        let now: Int64 = 1_763_760_000_000
        let conn = self.conn
        try conn.immediateTransaction { () throws(InboxWriteError) in
            try InboxWriter.save(inboxId: r.inboxId, clientId: r.clientId, now: now, on: conn)
            try InboxWriter.createConversation(
                NewConversation(id: r.conversationId, inboxId: r.inboxId, name: "Vectors", creatorInboxId: file.creatorInboxId,
                                state: .pendingJoin, createdAt: now, members: members), on: conn)
        }
        try conn.immediateTransaction { () throws(OutgoingWriteError) in
            try OutgoingMessageWriter.insert(
                OutgoingMessage(id: file.joinRequestId, conversationId: r.conversationId, senderInboxId: r.inboxId, sentAtMs: now,
                                contentType: ContentType.joinRequest, content: Array("{}".utf8), fallback: nil, referenceId: nil),
                pushes: [OutboxEntry(memberInboxId: cora.inboxId, endpoint: cora.endpoint,
                                     clientId: cora.clientId, bodyId: nil, payload: [0x7b, 0x7d])],
                now: now, on: conn)
        }
    }

    struct Snapshot: Equatable {
        let refusals: [String]
        let messages: [String]
        let state: String
    }

    func snapshot() throws -> Snapshot {
        Snapshot(refusals: try conn.query("SELECT joinRequestId, conversationId, reason FROM join_refusal").map {
                     "\(try $0.string(0)) \(try $0.string(1)) \(try $0.string(2))"
                 },
                 messages: try conn.query("SELECT id FROM message ORDER BY id").map { try $0.string(0) },
                 state: try conn.queryOne("SELECT state FROM conversation")?.string(0) ?? "none")
    }
}
