import DaemonStore
import SharedStore
import SottoCrypto
import TestSupport
import Testing

/// The two rate limits of docs/protocol/roster.md §9–§10 as the database keeps them
/// (`RosterRequestRepository`, docs/adr/0049), on a real database with the clock given: a
/// member asks 3 s after it saw a gap and then at most once a minute; the creator answers a
/// member at most once per 5 minutes and re-issues its renames at most once a minute.
@Suite("Roster requests in the database")
struct RosterRequestStoreTests {
    let gapWait: Int64 = 3_000, askEvery: Int64 = 60_000, answerEvery: Int64 = 300_000, renameEvery: Int64 = 60_000

    @Test("a member: no request before the gap is 3 s old; then one; the next not before 60 s after it")
    func memberAsksOncePerMinute() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let seen = f.now
        try conn.run("INSERT INTO roster_pending(conversationId, base, messageId, content, receivedAt) VALUES (?, 4, 'm', x'7b7d', ?)",
                     [.text(f.conversationId), .integer(seen)])
        let gaps = { (t: Int64) throws -> [RosterRequestRepository.Gap] in
            try RosterRequestRepository.gapsToAsk(seenBy: t - gapWait, askedBy: t - askEvery, now: t, on: conn)
        }
        #expect(try gaps(seen + gapWait - 1) == [])
        #expect(try gaps(seen + gapWait).map { "\($0.conversationId) \($0.version)" } == ["\(f.conversationId) 0"])
        try RosterSettlementWriter.recordAsked(conversationId: f.conversationId, version: 0, now: seen + gapWait, on: conn)
        #expect(try gaps(seen + gapWait + askEvery - 1) == [])
        #expect(try gaps(seen + gapWait + askEvery).count == 1)
        #expect(try RosterRequestRepository.nextAskAt(waitMs: gapWait, everyMs: askEvery, now: seen, on: conn) == seen + gapWait + askEvery)
        // An exploded conversation asks nothing.
        try conn.run("UPDATE conversation SET expiresAt = ?", [.integer(seen)])
        #expect(try gaps(seen + gapWait + askEvery) == [])
    }

    @Test("the creator: a member answered at T is answered again at T + 5 min at the earliest, whatever it sends meanwhile")
    func creatorAnswersOncePerFiveMinutes() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let member = f.sender.inboxId
        let t = f.now
        try conn.immediateTransaction { () throws(StoreError) in
            _ = try RosterRequestWriter.record(conversationId: f.conversationId, inboxId: member, version: 2, now: t, on: conn)
        }
        let owed = { (at: Int64) throws in try RosterRequestRepository.owed(answeredBy: at - answerEvery, on: conn) }
        let first = try #require(try owed(t).first)
        #expect("\(first.conversationId) \(first.inboxId) \(first.version)" == "\(f.conversationId) \(member) 2")
        try RosterSettlementWriter.settle(first, answered: true, now: t, on: conn)
        #expect(try owed(t) == [])
        for version in 0..<5 as Range<Int64> {
            try conn.immediateTransaction { () throws(StoreError) in
                _ = try RosterRequestWriter.record(conversationId: f.conversationId, inboxId: member, version: version, now: t + 1, on: conn)
            }
        }
        #expect(try owed(t + answerEvery - 1) == [])
        #expect(try owed(t + answerEvery).map(\.version) == [4])
        #expect(try RosterRequestRepository.nextAnswerAt(everyMs: answerEvery, on: conn) == t + answerEvery)
        // Settled without an answer (the member was not behind): the window does not move.
        try RosterSettlementWriter.settle(try #require(try owed(t + answerEvery).first), answered: false, now: t + answerEvery, on: conn)
        #expect(try conn.queryOne("SELECT answeredAt FROM roster_request")?.int64(0) == t)
    }

    @Test("the creator: a member's renames are re-issued once a minute, the latest name then")
    func renamesOncePerMinute() throws {
        let f = try StoreFixture()
        let conn = try f.open()
        let member = f.sender.inboxId
        let t = f.now
        let record = { (name: String, at: Int64) throws in
            try conn.immediateTransaction { () throws(StoreError) in
                _ = try RosterRequestWriter.recordRename(conversationId: f.conversationId, inboxId: member, profileName: name,
                                                         now: at, on: conn)
            }
        }
        let owed = { (at: Int64) throws in
            try RosterRequestRepository.owedRenames(conversationId: f.conversationId, appliedBy: at - renameEvery, on: conn)
        }
        try record("Bea", t)
        let first = try #require(try owed(t).first)
        try RosterSettlementWriter.settle(first, applied: true, now: t, on: conn)
        try record("Beatrice", t + 1)
        try record("Bee", t + 2)
        #expect(try owed(t + renameEvery - 1) == [])
        #expect(try RosterRequestRepository.conversationsOwingRenames(appliedBy: t - 1, on: conn) == [])
        #expect(try owed(t + renameEvery).map(\.profileName) == ["Bee"])
        #expect(try RosterRequestRepository.nextRenameAt(everyMs: renameEvery, on: conn) == t + renameEvery)
    }
}
