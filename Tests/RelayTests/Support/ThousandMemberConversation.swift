import Foundation
import RelayTransport
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Issue #17's 1,000-member conversation behind one relay, set up as `RelayThousandMemberTests`
/// first did it: three (or more) real daemons from `RelayPeers` joined one by one, then
/// `lightCount` `LightMembers` whose endpoint is the relay: their join requests are published
/// into the creator's mailbox while its daemon is down, its worker stores them, and at launch
/// the daemon accepts them together. Returns once every device and every light member holds the
/// creator's roster (each light member's mailbox read through `LightMailboxes`).
///
/// ```swift
/// let thousand = try ThousandMemberConversation.make(peers, creator: "alice", joiners: ["bob", "carol"], clock: &clock)
/// defer { thousand.mailboxes.close() }
/// try thousand.mailboxes.sweep()   // what the relay holds for the 997 now
/// ```
struct ThousandMemberConversation {
    let trip: String
    let invite: InviteCode
    let light: LightMembers
    let mailboxes: LightMailboxes
    /// The creator's roster (every inboxId) and its version, which every device ended with.
    let roster: Set<String>
    let version: Int64

    static func make(_ peers: RelayPeers, creator creatorName: String, joiners: [String], lightCount: Int = 997,
                     clock: inout PhaseClock) throws -> ThousandMemberConversation {
        let creator = peers[creatorName]
        let trip = try peers.conversation(creator: creatorName, joiners: joiners)
        clock.lap("\(joiners.count + 1) daemons with relayd, \(joiners.joined(separator: " and ")) joined")

        let light = LightMembers(count: lightCount, endpoint: peers.server.url)
        let mailboxes = try LightMailboxes(light, relayURL: peers.server.url)
        var done = false
        defer { if !done { mailboxes.close() } }
        clock.lap("\(lightCount) light members' consumers made")

        let invite = try InviteCode.parse(try #require(try creator.json(["invite", trip, "--expires", "1h"])["code"] as? String))
        let requests = try light.joinRequests(invite: invite, topicInClear: false)
        creator.stopDaemon()
        let creatorBox = try peers.mailbox(creatorName, trip)
        let published = try peers.relay().publishAll(requests.map {
            BatchPush(payload: $0, mailbox: creatorBox, messageId: Hex.encode(SHA256.hash($0)))
        })
        #expect(published.allSatisfy { if case .success(let ack) = $0 { !ack.duplicate } else { false } })
        try creator.waitUntil("the creator's worker stored \(lightCount) join requests", timeoutMs: 120_000) {
            try creator.query("SELECT count(*) FROM join_request WHERE conversationId = ? AND state = 'pending'",
                              [.text(trip)])[0].int64(0) == Int64(lightCount)
        }
        clock.lap("\(lightCount) join requests through the relay into the creator's worker")
        let total = lightCount + joiners.count + 1
        try creator.startDaemon()
        try creator.waitUntil("the creator lists \(total) members", timeoutMs: 120_000) {
            try creator.conversation(trip)?["members"] as? Int == total
        }
        clock.lap("the creator's daemon accepted them")

        // Every device converges on the creator's roster and version.
        let expected = try roster(creator, trip)
        let expectedVersion = try version(creator, trip)
        #expect(expected.count == total && expected.isSuperset(of: light.inboxIds))
        #expect(expectedVersion == Int64(joiners.count + 1), "each daemon's join, then the \(lightCount) together")
        for name in joiners {
            let device = peers[name]
            try device.waitUntil("\(name) has the \(total)-member roster", timeoutMs: 120_000) {
                try version(device, trip) == expectedVersion && roster(device, trip) == expected
            }
        }
        clock.lap("\(joiners.joined(separator: " and ")) at the roster")
        var sweeps: [LightMailboxes.Sweep] = []
        do {
            try creator.waitUntil("every light member has the \(total)-member roster", timeoutMs: 180_000) {
                sweeps.append(try mailboxes.sweep())
                return light.all().values.allSatisfy { $0.version == expectedVersion && $0.roster == expected }
            }
        } catch {
            let versions = Dictionary(grouping: light.all().values, by: { "v\($0.version) \($0.roster.count) members" }).mapValues(\.count)
            let outbox = try creator.query("""
                SELECT m.contentType, o.state, coalesce(o.lastError, ''), count(*) FROM outbox o
                JOIN message m ON m.id = o.messageId GROUP BY 1, 2, 3
                """).map { "\(try $0.string(0)) \(try $0.string(1)) \(try $0.string(2)) x\(try $0.int64(3))" }
            Issue.record("light members: \(versions); sweeps: \(sweeps.suffix(3).map(\.description)) of \(sweeps.count); refused: \(light.refused.prefix(3)); creator outbox: \(outbox); stored on the relay: \(try peers.relay().storedCount())")
            throw error
        }
        #expect(light.refused.isEmpty, "\(light.refused.prefix(3))")
        #expect(sweeps.map(\.bodiesFetched).reduce(0, +) == 1, "one full-roster body for the \(lightCount) joiners")
        clock.lap("\(lightCount) light members at the roster (\(sweeps.count) sweeps: \(sweeps.map(\.description)); \(light.load))")
        done = true
        return ThousandMemberConversation(trip: trip, invite: invite, light: light, mailboxes: mailboxes,
                                          roster: expected, version: expectedVersion)
    }

    /// Every inboxId in `device`'s member list of `trip`.
    static func roster(_ device: Device, _ trip: String) throws -> Set<String> {
        Set(try device.query("SELECT inboxId FROM member WHERE conversationId = ?", [.text(trip)]).map { try $0.string(0) })
    }

    /// `device`'s roster version of `trip` (-1: no such conversation).
    static func version(_ device: Device, _ trip: String) throws -> Int64 {
        try device.query("SELECT rosterVersion FROM conversation WHERE id = ?", [.text(trip)]).first?.int64(0) ?? -1
    }
}

/// Wall time of each named phase, printed at the end of a long test.
struct PhaseClock {
    private var last = MonotonicClock.nowNs()
    private(set) var phases: [(String, UInt64)] = []

    mutating func lap(_ what: String) {
        let now = MonotonicClock.nowNs()
        phases.append((what, (now - last) / 1_000_000))
        FileHandle.standardError.write(Data("phase: \(what): \((now - last) / 1_000_000) ms\n".utf8))
        last = now
    }

    var report: String { phases.map { "\($0.0): \($0.1) ms" }.joined(separator: "; ") }
}
