import DaemonStore
import SharedStore
import SottoCrypto
import TestSupport
import Testing
import SottoWire

/// Counts every row of every table, to prove a refusal wrote nothing.
func rowCounts(_ conn: SQLiteConnection) throws -> [String: Int64] {
    var out: [String: Int64] = [:]
    for table in ["inbox", "conversation", "member", "member_profile", "invite", "join_request",
                  "message", "conversation_local_state", "outbox", "change_log"] {
        out[table] = try conn.queryOne("SELECT count(*) FROM \(table)")?.int64(0)
    }
    return out
}

@Suite("Store writer invariants")
struct WriterInvariantTests {
    func write(_ f: StoreFixture, _ conn: SQLiteConnection, _ m: IncomingMessage,
               topic: String? = nil, inbox: String? = nil, now: Int64? = nil) throws(IncomingWriteError) -> IncomingWriteOutcome {
        try conn.immediateTransaction { () throws(IncomingWriteError) in
            try IncomingMessageWriter.write(m, recipientInboxId: inbox ?? f.inboxId, topic: topic ?? f.topic,
                                            now: now ?? f.now, on: conn)
        }
    }

    /// Expects `error` and no row changed anywhere.
    func expectRefused(_ f: StoreFixture, _ conn: SQLiteConnection, _ m: IncomingMessage, _ error: IncomingWriteError,
                       topic: String? = nil, inbox: String? = nil, now: Int64? = nil) throws {
        let before = try rowCounts(conn)
        #expect(throws: error) { try write(f, conn, m, topic: topic, inbox: inbox, now: now) }
        #expect(try rowCounts(conn) == before)
    }

    /// Expects a refusal acked as `code` and no row changed anywhere.
    func expectRefused(_ f: StoreFixture, _ conn: SQLiteConnection, _ m: IncomingMessage, code: String) throws {
        let before = try rowCounts(conn)
        do {
            _ = try write(f, conn, m)
            Issue.record("written, expected \(code)")
        } catch {
            #expect(error.protocolCode == code, "\(error)")
        }
        #expect(try rowCounts(conn) == before)
    }

    @Test func storedMessageBumpsUnreadActivityAndChangeLog() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let seqBefore = try ChangeLogRepository.latestSeq(on: conn)
        let m = f.text("hello")
        guard case .written(let receipt) = try write(f, conn, m, now: f.now + 5) else {
            Issue.record("not written"); return
        }
        #expect(receipt.conversationName == "Trip" && receipt.unreadCount == 1 && !receipt.muted)
        #expect(receipt.senderProfileName == "Sender" && receipt.isUserVisible)
        #expect(try MessageRowRepository.find(id: m.id, on: conn)?.content == Array("hello".utf8))
        #expect(try InboxRepository.find(inboxId: f.inboxId, on: conn)?.lastActivityAt == f.now + 5)
        let changes = try ChangeLogRepository.since(seq: seqBefore, limit: 10, on: conn)
        #expect(changes.map(\.knownKind) == [.messageInserted])
        #expect(changes.first?.seq == receipt.seq && changes.first?.entityId == m.id)
    }

    @Test func clientIdMismatch() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        #expect(throws: InboxWriteError.clientIdMismatch) {
            try conn.immediateTransaction { () throws(InboxWriteError) in
                try InboxWriter.save(inboxId: f.inboxId, clientId: SecureRandom.uuidV4(), now: f.now, on: conn)
            }
        }
        // The same pair again is fine and writes nothing.
        let before = try rowCounts(conn)
        let seq = try conn.immediateTransaction { () throws(InboxWriteError) in
            try InboxWriter.save(inboxId: f.inboxId, clientId: f.clientId, now: f.now, on: conn)
        }
        #expect(seq == nil)
        #expect(try rowCounts(conn) == before)
        #expect(throws: InboxWriteError.clientIdInUse) {
            try conn.immediateTransaction { () throws(InboxWriteError) in
                try InboxWriter.save(inboxId: StoreFixture.randomHex(32), clientId: f.clientId, now: f.now, on: conn)
            }
        }
    }

    @Test func unknownConversation() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        var other = f.text("x")
        other.conversationId = StoreFixture.randomHex(16)
        try expectRefused(f, conn, other, .unknownConversation, topic: DBConversation.topic(for: other.conversationId))
        try expectRefused(f, conn, f.text("x"), .unknownConversation, topic: "/sotto/1/c/" + StoreFixture.randomHex(16))
        try expectRefused(f, conn, f.text("x"), .unknownConversation, inbox: StoreFixture.randomHex(32))
    }

    @Test func conversationExpired() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        try conn.execute("UPDATE conversation SET expiresAt = \(f.now)")
        try expectRefused(f, conn, f.text("late"), .conversationExpired, now: f.now)
        #expect(throws: Never.self) { try write(f, conn, f.text("early"), now: f.now - 1) }
    }

    @Test func unknownSender() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let stranger = MemberEntry(inboxId: StoreFixture.randomHex(32), publicKey: "02" + StoreFixture.randomHex(32),
                                   endpoint: "unix:/x", clientId: SecureRandom.uuidV4())
        try expectRefused(f, conn, f.text("x", from: stranger), .unknownSender)
        var wrongKey = f.sender
        wrongKey.publicKey = "02" + StoreFixture.randomHex(32)
        try expectRefused(f, conn, f.text("x", from: wrongKey), .unknownSender)
        #expect(IncomingWriteError.unknownSender.protocolCode == "unknown_sender")
        #expect(IncomingWriteError.store(.busy).protocolCode == "busy")
        #expect(IncomingWriteError.store(.corrupt(code: 11, message: "")).protocolCode == "internal")
    }

    @Test func duplicateWritesNothing() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let m = f.text("once")
        _ = try write(f, conn, m)
        let before = try rowCounts(conn)
        let unread = try LocalStateRepository.state(of: f.conversationId, on: conn)?.unreadCount
        #expect(try write(f, conn, m) == .duplicate)
        #expect(try rowCounts(conn) == before)
        #expect(try LocalStateRepository.state(of: f.conversationId, on: conn)?.unreadCount == unread)

        // A join request id is a message id too (taken on the creator's device).
        try conn.run("UPDATE conversation SET creatorInboxId = inboxId WHERE id = ?", [.text(f.conversationId)])
        let join = f.message(kind: .joinRequest(inviteId: "aa", secret: "bb", profileName: "New",
                                                endpoint: "unix:/n", clientId: SecureRandom.uuidV4()),
                             from: MemberEntry(inboxId: StoreFixture.randomHex(32), publicKey: "02" + StoreFixture.randomHex(32),
                                               endpoint: "unix:/n", clientId: SecureRandom.uuidV4()),
                             contentType: "sotto/join_request:1.0")
        _ = try write(f, conn, join)
        let afterJoin = try rowCounts(conn)
        #expect(try write(f, conn, join) == .duplicate)
        #expect(try rowCounts(conn) == afterJoin)
    }

    @Test func joinRequestFromAnyoneOnlyOnTheCreatorsDevice() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let newcomer = MemberEntry(inboxId: StoreFixture.randomHex(32), publicKey: "02" + StoreFixture.randomHex(32),
                                   endpoint: "unix:/n", clientId: SecureRandom.uuidV4())
        let join = f.message(kind: .joinRequest(inviteId: "aa", secret: "bb", profileName: "New",
                                                endpoint: newcomer.endpoint, clientId: newcomer.clientId),
                             from: newcomer, contentType: "sotto/join_request:1.0")
        // This device is a member, not the creator: nobody here could decide on it.
        try expectRefused(f, conn, join, code: "unknown_sender")
        try conn.run("UPDATE conversation SET creatorInboxId = inboxId WHERE id = ?", [.text(f.conversationId)])
        guard case .written(let receipt) = try write(f, conn, join) else { Issue.record("refused"); return }
        #expect(!receipt.isUserVisible)
        let pending = try JoinRequestRepository.pending(conversationId: f.conversationId, on: conn)
        #expect(pending.map(\.requesterInboxId) == [newcomer.inboxId])
        #expect(pending.first?.requesterPublicKey == newcomer.publicKey && pending.first?.messageId == join.id)
    }

    @Test func membershipOnlyFromCreator() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        try conn.execute("UPDATE conversation SET state = 'pendingJoin'")
        let newcomer = MemberEntry(inboxId: StoreFixture.randomHex(32), publicKey: "02" + StoreFixture.randomHex(32),
                                   endpoint: "unix:/n", clientId: SecureRandom.uuidV4(), profileName: "New")
        let kind = IncomingMessage.Kind.membership(name: "Renamed", members: [f.creator, newcomer])
        // From a genuine member who is not the creator: refused, nothing written.
        try expectRefused(f, conn, f.message(kind: kind, from: f.sender, contentType: "sotto/membership:1.0"),
                          code: "unknown_sender")
        // From the creator, but dropping the creator (or its key): refused.
        try expectRefused(f, conn, f.message(kind: .membership(name: "Coup", members: [newcomer]), from: f.creator,
                                             contentType: "sotto/membership:1.0"), code: "malformed_message")
        var rekeyed = f.creator
        rekeyed.publicKey = "02" + StoreFixture.randomHex(32)
        try expectRefused(f, conn, f.message(kind: .membership(name: "Coup", members: [rekeyed, newcomer]), from: f.creator,
                                             contentType: "sotto/membership:1.0"), code: "malformed_message")

        _ = try write(f, conn, f.message(kind: kind, from: f.creator, contentType: "sotto/membership:1.0"))
        let members = try MemberRepository.members(of: f.conversationId, on: conn)
        #expect(Set(members.map(\.inboxId)) == [f.creator.inboxId, newcomer.inboxId])
        #expect(members.first { $0.inboxId == f.creator.inboxId }?.role == .creator)
        let conversation = try ConversationRepository.find(id: f.conversationId, on: conn)
        #expect(conversation?.name == "Renamed" && conversation?.state == .active)
        #expect(try MemberNamesRepository.profileName(conversationId: f.conversationId, inboxId: newcomer.inboxId, on: conn) == "New")
    }

    @Test func explodeDecisionsFollowTheHighestSequence() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        func decide(_ schedule: ExplodeSchedule, sentAt: Int64? = nil) throws {
            _ = try write(f, conn, f.message(kind: .explodeSettings(schedule), from: f.creator,
                                             contentType: ContentType.explodeSettings, content: schedule.content,
                                             sentAt: sentAt))
        }
        func expiresAt() throws -> Int64? { try ConversationRepository.find(id: f.conversationId, on: conn)?.expiresAt }
        // Version 1 (sequence 0): the earlier wins, as before.
        try decide(ExplodeSchedule(sequence: 0, expiresAtMs: f.now + 10_000))
        try decide(ExplodeSchedule(sequence: 0, expiresAtMs: f.now + 50_000))
        #expect(try expiresAt() == f.now + 10_000)
        // A numbered decision replaces it, later or not.
        try decide(ExplodeSchedule(sequence: 2, expiresAtMs: f.now + 90_000))
        #expect(try expiresAt() == f.now + 90_000)
        // An older decision arriving late is stored and changes nothing.
        try decide(ExplodeSchedule(sequence: 1, expiresAtMs: f.now + 3_000))
        #expect(try expiresAt() == f.now + 90_000)
        // A cancel clears it.
        try decide(ExplodeSchedule(sequence: 3, expiresAtMs: nil))
        #expect(try expiresAt() == nil)
        // Shown on the timeline, and not counted as unread.
        #expect(try MessageRowRepository.count(conversationId: f.conversationId, on: conn) == 5)
        #expect(try LocalStateRepository.state(of: f.conversationId, on: conn)?.unreadCount == 0)
        try decide(ExplodeSchedule(sequence: 4, expiresAtMs: f.now + 2_000))
        #expect(try expiresAt() == f.now + 2_000)
        // Made (by the creator's clock) at or after the time in force: too late, nothing written.
        let late = ExplodeSchedule(sequence: 5, expiresAtMs: f.now + 60_000)
        try expectRefused(f, conn, f.message(kind: .explodeSettings(late), from: f.creator,
                                             contentType: ContentType.explodeSettings, content: late.content,
                                             sentAt: f.now + 2_000), code: "conversation_expired")
        #expect(try expiresAt() == f.now + 2_000)
        // From a member who is not the creator: refused, nothing written.
        let hostile = ExplodeSchedule(sequence: 99, expiresAtMs: nil)
        try expectRefused(f, conn, f.message(kind: .explodeSettings(hostile), from: f.sender,
                                             contentType: ContentType.explodeSettings, content: hostile.content),
                          code: "unknown_sender")
        #expect(try expiresAt() == f.now + 2_000)
    }

    @Test func changeAndChangeLogRollBackTogether() throws {
        struct Boom: StoreErrorConvertible { init(storeError: StoreError) {}; init() {} }
        let f = try StoreFixture()
        let conn = try f.open()
        let before = try rowCounts(conn)
        let m = f.text("doomed")
        #expect(throws: Boom.self) {
            try conn.immediateTransaction { () throws(Boom) in
                guard case .written = try? IncomingMessageWriter.write(m, recipientInboxId: f.inboxId, topic: f.topic,
                                                                       now: f.now, on: conn) else { return }
                // Inside the transaction both rows are there...
                #expect((try? MessageRowRepository.find(id: m.id, on: conn)) != nil)
                throw Boom()
            }
        }
        // ...and after the failure neither is.
        #expect(try MessageRowRepository.find(id: m.id, on: conn) == nil)
        #expect(try rowCounts(conn) == before)
        #expect(!conn.isInTransaction)
    }
}
