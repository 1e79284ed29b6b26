import ControlProtocol
import Foundation
import SottoClient
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Issue #22 §2 (docs/protocol/explode-schedule.md, docs/adr/0040): the creator changes a
/// scheduled explode (postpone, bring forward, now, cancel) and every member's real daemon
/// and worker follow its latest decision: in any order of arrival, after being offline, never
/// a member's; and the race with the expiry ends the same on every device.
@Suite("Messaging: a scheduled explode can be changed", .serialized)
struct ExplodeScheduleTests {
    static func expiresAt(_ device: Device, _ conversation: String) throws -> Int64? {
        (try device.conversation(conversation)?["expiresAtMs"] as? NSNumber)?.int64Value
    }

    /// `sotto explode ARGS --json` on the creator: the time it set (nil: cancelled) and the sequence.
    static func decide(_ creator: Device, _ arguments: [String]) throws -> (expiresAt: Int64?, sequence: Int64) {
        let result = try creator.json(["explode"] + arguments)
        return ((result["expiresAtMs"] as? NSNumber)?.int64Value, try require((result["sequence"] as? NSNumber)?.int64Value))
    }

    static func waitForSchedule(_ devices: [Device], _ conversation: String, _ expected: Int64?, timeoutMs: Int64 = 20_000) throws {
        for device in devices {
            try device.waitUntil("\(device.name) has \(expected.map { ISO8601.string(fromMillis: $0) } ?? "no explosion")",
                                 timeoutMs: timeoutMs) {
                try expiresAt(device, conversation) == expected
            }
        }
    }

    /// A push of `schedule` signed with the creator's real key, sealed to `device`'s inbox.
    static func creatorPush(_ creator: Identity, to device: Device, in conversation: String, _ schedule: ExplodeSchedule,
                            id: String = Hex.encode(SecureRandom.bytes(16)),
                            sentAtMs: Int64 = WallClock.nowMs()) throws -> [UInt8] {
        try HostileMemberDaemonTests.push(from: creator, to: device, in: conversation, contentType: ContentType.explodeSettings,
                                          content: schedule.content, fallback: schedule.fallback, id: id,
                                          sentAtMs: sentAtMs).payload
    }

    static func send(_ payload: [UInt8], to device: Device) throws -> PushAck {
        let ack = try PushClient.send(payload, to: device.runtime.pushSocketPath)
        return try #require(PushAck.parse(Array(ack.utf8)), "not an ack: \(ack)")
    }

    static func errorCode(_ ack: PushAck) -> PushErrorCode? {
        if case .error(let error) = ack { return error.code }
        return nil
    }

    @Test("postpone, bring forward, cancel, schedule again, then now: both members follow each decision")
    func creatorChangesTheSchedule() throws {
        let net = try Network(["alice", "bob", "carol"])
        let (alice, bob, carol) = (net["alice"], net["bob"], net["carol"])
        let trip = try net.conversation(creator: alice, joiners: [bob, carol])
        let members = [bob, carol]

        let first = try Self.decide(alice, [trip, "--in", "1h"])
        #expect(first.sequence == 1)
        try Self.waitForSchedule(members + [alice], trip, first.expiresAt)
        #expect(try bob.cli(["ls"]).stdout.contains("explodes"))

        let later = try Self.decide(alice, [trip, "--in", "2h"])
        #expect(later.sequence == 2)
        #expect(try require(later.expiresAt) > require(first.expiresAt))
        try Self.waitForSchedule(members + [alice], trip, later.expiresAt)

        let sooner = try Self.decide(alice, [trip, "--in", "30m"])
        #expect(sooner.sequence == 3)
        #expect(try require(sooner.expiresAt) < require(first.expiresAt))
        try Self.waitForSchedule(members + [alice], trip, sooner.expiresAt)

        // A time in the past is a mistake, not "now": refused, nothing changes.
        let past = try alice.cli(["explode", trip, "--at", "2020-01-01T00:00:00Z"])
        #expect(past.status == 65, "\(past.stderr)")
        #expect(try Self.expiresAt(alice, trip) == sooner.expiresAt)
        #expect(try alice.cli(["explode", trip, "--cancel", "--in", "1h"]).status == 64)

        let cancelled = try alice.cli(["explode", trip, "--cancel"])
        #expect(cancelled.status == 0, "\(cancelled.stderr)")
        #expect(cancelled.stdout.contains("will not explode"), "\(cancelled.stdout)")
        try Self.waitForSchedule(members + [alice], trip, nil)
        #expect(try !bob.cli(["ls"]).stdout.contains("explodes"))
        // Nothing left to cancel: refused (exit 65), nothing sent.
        let again = try alice.cli(["explode", trip, "--cancel"])
        #expect(again.status == 65)
        #expect(again.stderr.contains("no explosion is scheduled"), "\(again.stderr)")

        let rescheduled = try Self.decide(alice, [trip, "--in", "3h"])
        #expect(rescheduled.sequence == 5)
        try Self.waitForSchedule(members, trip, rescheduled.expiresAt)
        // Brought forward to now: every device deletes it now.
        let now = try alice.json(["explode", trip])
        #expect(now["deleted"] as? Bool == true)
        #expect((now["sequence"] as? NSNumber)?.int64Value == 6)
        for device in members {
            try device.waitUntil("\(device.name) deleted it") { try isGone(device, trip) }
        }
        #expect(try isGone(alice, trip))
    }

    @Test("a member offline during three changes converges on the last one when it comes back")
    func offlineMemberConverges() throws {
        let net = try Network(["alice", "bob", "carol"], environment: ["SOTTO_EXPLODE_DELIVERY_MS": "300"])
        let (alice, bob, carol) = (net["alice"], net["bob"], net["carol"])
        let trip = try net.conversation(creator: alice, joiners: [bob, carol])
        let first = try Self.decide(alice, [trip, "--in", "1h"])
        try Self.waitForSchedule([bob, carol], trip, first.expiresAt)

        carol.stopPushSocket()
        carol.stopDaemon()
        let postponed = try Self.decide(alice, [trip, "--in", "2h"])
        _ = try Self.decide(alice, [trip, "--cancel"])
        let last = try Self.decide(alice, [trip, "--in", "90m"])
        #expect(last.sequence == 4)
        try Self.waitForSchedule([bob], trip, last.expiresAt)
        // Carol's copy still holds the first decision: the ones she missed are on their way.
        let carolConversation = try carol.query("SELECT expiresAt FROM conversation WHERE id = ?", [.text(trip)])
        #expect(try carolConversation.first?.optionalInt64(0) == first.expiresAt)
        #expect(postponed.expiresAt != last.expiresAt)

        try carol.startDaemon()
        try carol.startPushSocket()
        try Self.waitForSchedule([carol], trip, last.expiresAt, timeoutMs: 90_000)
        // The outbox retries each push on its own backoff, so the missed decisions may come in
        // any order (the last one often first): once all are here, the last one still holds.
        try carol.waitUntil("carol holds all four decisions", timeoutMs: 90_000) {
            try carol.query("SELECT count(*) FROM message WHERE conversationId = ? AND contentType = ?",
                            [.text(trip), .text(ContentType.explodeSettings)])[0].int64(0) == 4
        }
        #expect(try Self.expiresAt(carol, trip) == last.expiresAt)
    }

    @Test("reordered and duplicated decisions converge; a member's change, and garbage signed by the creator, are refused and change nothing")
    func orderDuplicatesHostileAndGarbage() throws {
        let net = try Network(["alice", "bob", "carol"])
        let (alice, bob, carol) = (net["alice"], net["bob"], net["carol"])
        let trip = try net.conversation(creator: alice, joiners: [bob, carol])
        let first = try Self.decide(alice, [trip, "--in", "1h"])
        try Self.waitForSchedule([bob, carol], trip, first.expiresAt)
        let creator = try HostileMemberDaemonTests.identity(of: alice, in: trip)
        let start = try require(first.expiresAt)

        // Decisions 2 (postpone), 3 (bring forward), 4 (cancel) made by the creator, delivered
        // in a different order to each member, the last one twice.
        let decisions = [ExplodeSchedule(sequence: 2, expiresAtMs: start + 3_600_000),
                         ExplodeSchedule(sequence: 3, expiresAtMs: start - 1_800_000),
                         ExplodeSchedule(sequence: 4, expiresAtMs: nil)]
        let ids = decisions.map { _ in Hex.encode(SecureRandom.bytes(16)) }
        for (device, order) in [(bob, [2, 1, 0, 2]), (carol, [0, 2, 1, 0])] {
            for index in order {
                let ack = try Self.send(try Self.creatorPush(creator, to: device, in: trip, decisions[index], id: ids[index]),
                                        to: device)
                if case .ok(let id, _) = ack { #expect(id == ids[index]) } else { Issue.record("\(device.name): \(ack)") }
            }
            #expect(try Self.expiresAt(device, trip) == nil, "\(device.name) did not end cancelled")
        }

        // Decision 5 from the creator: both follow it again.
        let fifth = ExplodeSchedule(sequence: 5, expiresAtMs: start + 7_200_000)
        for device in [bob, carol] {
            _ = try Self.send(try Self.creatorPush(creator, to: device, in: trip, fifth), to: device)
            #expect(try Self.expiresAt(device, trip) == fifth.expiresAtMs)
        }

        // Bob, a real member with his real key, tries to cancel it (a higher sequence) on
        // carol's and on alice's device, and to bring it forward to now.
        let mallory = try HostileMemberDaemonTests.identity(of: bob, in: trip)
        for target in [carol, alice] {
            let before = try DatabaseDump.tables(path: target.group.databasePath)
            for hostile in [ExplodeSchedule(sequence: 99, expiresAtMs: nil),
                            ExplodeSchedule(sequence: ExplodeSchedule.maxSequence, expiresAtMs: WallClock.nowMs())] {
                let ack = try Self.send(try Self.creatorPush(mallory, to: target, in: trip, hostile), to: target)
                #expect(Self.errorCode(ack) == .unknownSender, "\(target.name): \(ack)")
            }
            #expect(try DatabaseDump.tables(path: target.group.databasePath) == before, "\(target.name) changed")
        }
        #expect(try Self.expiresAt(carol, trip) == fifth.expiresAtMs)

        // Garbage in the creator's own signed messages: malformed_message, nothing written.
        let before = try DatabaseDump.tables(path: bob.group.databasePath)
        let garbage = ["{\"cancel\":true}", "{\"cancel\":true,\"expiresAt\":\"2026-05-01T18:00:00Z\",\"sequence\":9}",
                       "{\"expiresAt\":\"2026-05-01T18:00:00Z\",\"sequence\":1e3}", "{\"sequence\":-4,\"cancel\":true}",
                       "{\"cancel\":\"yes\",\"sequence\":9}", "{\"sequence\":9}", "[]", "{\"expiresAt\":", "\u{0}\u{ff}"]
        for content in garbage {
            let push = try HostileMemberDaemonTests.push(from: creator, to: bob, in: trip, contentType: ContentType.explodeSettings,
                                                         content: Array(content.utf8), fallback: "x")
            let ack = try Self.send(push.payload, to: bob)
            #expect(Self.errorCode(ack) == .malformedMessage, "\(content): \(ack)")
        }
        #expect(try DatabaseDump.tables(path: bob.group.databasePath) == before)
        #expect(try Self.expiresAt(bob, trip) == fifth.expiresAtMs)
    }

    @Test("explodes at once on the creator (one connection each, released together) take distinct sequences; the member follows the last")
    func concurrentDecisionsAreNumberedApart() throws {
        let net = try Network(["alice", "bob"], environment: ["SOTTO_EXPLODE_DELIVERY_MS": "300"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob])
        let hours: [Int64] = [1, 2, 3, 4, 5, 6]
        let path = alice.runtime.controlSocketPath
        let outcomes = Outcomes()
        let connected = DispatchSemaphore(value: 0), start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        for hour in hours {
            let params = ExplodeParams(conversation: trip, atMs: WallClock.nowMs() + hour * 3_600_000)
            DispatchQueue.global().async(group: group) {
                let client = Result { try ControlClient.connect(path: path, receiveTimeoutSeconds: 60) }
                connected.signal()
                start.wait()
                outcomes.append(Result { let r = try client.get().call(params); return (r.expiresAtMs, r.sequence) })
            }
        }
        for _ in hours { connected.wait() }
        for _ in hours { start.signal() }
        group.wait()
        let decided = try outcomes.all.map { try $0.get() }
        #expect(Set(decided.map(\.sequence)) == Set(1...Int64(hours.count)), "\(decided)")
        let inForce = try require(decided.max { $0.sequence < $1.sequence }).expiresAt
        #expect(try Self.expiresAt(alice, trip) == inForce)
        try Self.waitForSchedule([bob], trip, inForce)
    }

    @Test("the race with the expiry: a change made at the time is refused everywhere; one made before but arriving after brings nothing back")
    func raceAtExpiryDecidedAlike() throws {
        let net = try Network(["alice", "bob", "carol"], environment: ["SOTTO_EXPLODE_DELIVERY_MS": "300"])
        let (alice, bob, carol) = (net["alice"], net["bob"], net["carol"])
        let trip = try net.conversation(creator: alice, joiners: [bob, carol])
        let text = ExplodeTests.unique("before the race")
        _ = try alice.json(["send", trip, text])
        for device in [bob, carol] { try device.waitUntil("\(device.name) has the text") { hasText(device, trip, text) } }
        let creator = try HostileMemberDaemonTests.identity(of: alice, in: trip)

        // Made (by the creator's signed clock) at the expiry, here long before it: refused on both.
        let planned = try require(try Self.decide(alice, [trip, "--in", "1h"]).expiresAt)
        try Self.waitForSchedule([bob, carol], trip, planned)
        for device in [bob, carol] {
            let before = try DatabaseDump.tables(path: device.group.databasePath)
            let atTheTime = ExplodeSchedule(sequence: 9, expiresAtMs: nil)
            let ack = try Self.send(try Self.creatorPush(creator, to: device, in: trip, atTheTime, sentAtMs: planned), to: device)
            #expect(Self.errorCode(ack) == .conversationExpired, "\(device.name): \(ack)")
            #expect(try DatabaseDump.tables(path: device.group.databasePath) == before)
            #expect(try Self.expiresAt(device, trip) == planned)
        }

        let scheduled = try Self.decide(alice, [trip, "--in", "6s"])
        let expiry = try require(scheduled.expiresAt)
        try Self.waitForSchedule([bob, carol], trip, expiry)
        let postpone = ExplodeSchedule(sequence: scheduled.sequence + 1, expiresAtMs: expiry + 3_600_000)

        // Made a millisecond before the expiry, arriving after it: the expiry wins on both.
        let late = [bob, carol].map { device in
            Result { try Self.creatorPush(creator, to: device, in: trip, postpone, sentAtMs: expiry - 1) }
        }
        try alice.waitUntil("alice's copy exploded", timeoutMs: 30_000) { try isGone(alice, trip) }
        #expect(WallClock.nowMs() >= expiry)
        for (device, payload) in zip([bob, carol], late) {
            let ack = try Self.send(try payload.get(), to: device)
            // Refused as exploded, or, once the sweep wiped the identity, as unknown.
            #expect([.conversationExpired, .unknownClient].contains(Self.errorCode(ack)), "\(device.name): \(ack)")
            try device.waitUntil("\(device.name) deleted it") { try isGone(device, trip) }
            #expect(try device.query("SELECT count(*) FROM conversation")[0].int64(0) == 0)
            #expect(try !device.groupFilesContain(Array(text.utf8)))
        }
        // The creator cannot bring it back either.
        #expect(try alice.cli(["explode", trip, "--in", "1h"]).status != 0)
    }
}

/// Results gathered from concurrent CLI runs.
final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<(expiresAt: Int64?, sequence: Int64), any Error>] = []
    var all: [Result<(expiresAt: Int64?, sequence: Int64), any Error>] { lock.withLock { results } }
    func append(_ result: Result<(expiresAt: Int64?, sequence: Int64), any Error>) { lock.withLock { results.append(result) } }
}
