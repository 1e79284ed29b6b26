import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// docs/protocol/vectors/explode-schedule-v1.json, made from docs/protocol/explode-schedule.md
/// by a second implementation (make_explode_schedule_vectors.py): how a content decodes, which
/// decision is in force whatever the order of arrival, and how the race with the expiry is
/// decided (the race cases run through the real store writer).
@Suite("Explode schedule vectors")
struct ExplodeScheduleVectorTests {
    static let path = PackagePaths.root.appendingPathComponent("docs/protocol/vectors/explode-schedule-v1.json").path

    static func load() throws -> JSONValue {
        let data = try #require(FileManager.default.contents(atPath: path), "no \(path)")
        return try JSONParser.parse(Array(data), limits: .init(maxBytes: 1 << 20, maxDepth: 16))
    }

    static func decode(_ content: String) throws(PushError) -> ExplodeSchedule {
        guard case .explodeSettings(let schedule) = try MessageContent.decode(
            contentType: ContentType.explodeSettings, content: Array(content.utf8), fallback: "fallback")
        else { throw PushError(.malformedMessage, "not explode settings") }
        return schedule
    }

    @Test("every decode case: the decision, or malformed_message")
    func decodeCases() throws {
        let cases = try #require(try Self.load()["decode"]?.array)
        #expect(cases.count >= 20)
        for c in cases {
            let name = c["name"]?.string ?? "?"
            let content = try #require(c["content"]?.string, "\(name)")
            let expect = try #require(c["expect"], "\(name)")
            if let error = expect["error"]?.string {
                #expect(error == "malformed_message", "\(name)")
                do {
                    let schedule = try Self.decode(content)
                    Issue.record("\(name): decoded as \(schedule)")
                } catch {
                    #expect(error.code == .malformedMessage, "\(name): \(error)")
                }
                continue
            }
            let schedule = try Self.decode(content)
            #expect(schedule.sequence == expect["sequence"]?.int64, "\(name)")
            if expect["cancel"]?.bool == true {
                #expect(schedule.isCancel, "\(name)")
            } else {
                #expect(schedule.expiresAtMs == expect["expiresAtMs"]?.int64, "\(name)")
            }
        }
    }

    @Test("every in-force case, in the file's order and reversed: the same decision")
    func inForceCases() throws {
        let cases = try #require(try Self.load()["inForce"]?.array)
        #expect(cases.count >= 8)
        for c in cases {
            let name = c["name"]?.string ?? "?"
            let decisions = try (c["decisions"]?.array ?? []).map { try Self.decode(try #require($0.string)) }
            let expect = try #require(c["expect"], "\(name)")
            let expected = ExplodeSchedule(sequence: try #require(expect["sequence"]?.int64), expiresAtMs: expect["expiresAtMs"]?.int64)
            #expect(ExplodeSchedule.inForce(decisions) == expected, "\(name)")
            #expect(ExplodeSchedule.inForce(decisions.reversed()) == expected, "\(name), reversed")
        }
    }

    @Test("every race case through the store writer: ok changes the schedule, a refusal writes nothing")
    func raceCases() throws {
        let cases = try #require(try Self.load()["race"]?.array)
        for c in cases {
            let name = c["name"]?.string ?? "?"
            let f = try StoreFixture()
            let conn = try f.open()
            let inForce = c["expiresAtInForceMs"]?.int64
            if let inForce {
                let first = ExplodeSchedule(sequence: 1, expiresAtMs: inForce)
                _ = try conn.immediateTransaction { () throws(IncomingWriteError) in
                    try IncomingMessageWriter.write(
                        f.message(kind: .explodeSettings(first), from: f.creator, contentType: ContentType.explodeSettings,
                                  content: first.content, sentAt: inForce - 3_600_000),
                        recipientInboxId: f.inboxId, topic: f.topic, now: inForce - 3_600_000, on: conn)
                }
            }
            let sentAt = try #require(c["sentAtMs"]?.int64), now = try #require(c["nowMs"]?.int64)
            let postpone = ExplodeSchedule(sequence: 2, expiresAtMs: (inForce ?? now) + 86_400_000)
            let message = f.message(kind: .explodeSettings(postpone), from: f.creator, contentType: ContentType.explodeSettings,
                                    content: postpone.content, sentAt: sentAt)
            let before = try rowCounts(conn)
            let code: String
            do {
                _ = try conn.immediateTransaction { () throws(IncomingWriteError) in
                    try IncomingMessageWriter.write(message, recipientInboxId: f.inboxId, topic: f.topic, now: now, on: conn)
                }
                code = "ok"
            } catch {
                code = error.protocolCode
            }
            #expect(code == c["expect"]?.string, "\(name)")
            let expiresAt = try ConversationRepository.find(id: f.conversationId, on: conn)?.expiresAt
            if code == "ok" {
                #expect(expiresAt == postpone.expiresAtMs, "\(name)")
            } else {
                #expect(try rowCounts(conn) == before, "\(name)")
                #expect(expiresAt == inForce, "\(name)")
            }
        }
    }

    @Test("mutated decisions: malformed_message or a decision that re-encodes to itself; in force does not depend on order")
    func mutatedDecisions() throws {
        var rng = SeededGenerator(state: 0x5c4e_d01e)
        // The well-formed cases: a mutation of them is sometimes still a decision.
        let seeds = try (Self.load()["decode"]?.array ?? []).filter { $0["expect"]?["error"] == nil }
            .compactMap { $0["content"]?.string }.map { Array($0.utf8) }
        var decoded: [ExplodeSchedule] = [], refused = 0
        for iteration in 0..<3_000 {
            let bytes = rng.mutate(seeds[iteration % seeds.count])
            do {
                guard case .explodeSettings(let schedule) = try MessageContent.decode(
                    contentType: ContentType.explodeSettings, content: bytes, fallback: nil) else {
                    Issue.record("not explode settings"); continue
                }
                #expect(try Self.decode(String(decoding: schedule.content, as: UTF8.self)) == schedule)
                decoded.append(schedule)
            } catch {
                #expect(error.code == .malformedMessage, "\(error)")
                refused += 1
            }
        }
        // The mutations are neither all fatal nor all harmless.
        #expect(decoded.count > 20 && refused > 1_000, "\(decoded.count) decoded, \(refused) refused")
        #expect(ExplodeSchedule.inForce(decoded) == ExplodeSchedule.inForce(decoded.shuffled(using: &rng)))
    }
}
