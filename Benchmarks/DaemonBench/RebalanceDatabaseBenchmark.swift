import DaemonCore
import DaemonEngine
import DaemonStore
import Foundation
import SharedStore
import SottoClient
import SottoCrypto
import SottoDaemon
import SottoWire
import TestSupport

/// The "Inbox Lifecycle Management" rebalance against a real database: 10,000 inboxes (one conversation each) and
/// a given number of messages in `shared.sqlite`, ranked by `InboxRankingRepository.rankedByActivity`
/// through the daemon's own `DatabaseActivitySource`, driven by the real inbox LRU.
/// Run with 10,000 and with 1,000,000 messages to show the cost does not grow with messages.
///
/// ```swift
/// let figures = try await RebalanceDatabaseBenchmark.run(messages: 1_000_000)
/// print(figures.rebalanceMedianMs)
/// ```
enum RebalanceDatabaseBenchmark {
    struct Figures {
        let messages: Int
        let buildSeconds: Double
        let launchMs: Double
        let rebalanceMedianMs: Double
        let rebalanceP99Ms: Double
        let awake: Int
    }

    static let inboxes = 10_000
    static let capacity = 20

    static func run(messages: Int, rounds: Int = 200) async throws -> Figures {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sotto-rebalance-\(SecureRandom.uuidV4())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let group = GroupDirectory(path: directory.path)
        try group.create()
        let database = try DaemonDatabase(directory: group)
        let base: Int64 = 1_700_000_000_000

        let buildStart = MonotonicClock.nowNs()
        try await database.write { conn in
            try BulkFixture.insertInboxes(inboxes, lastActivityFrom: base, on: conn)
            try BulkFixture.insertMessages(messages, across: inboxes, sentFrom: base, on: conn)
        }
        let buildSeconds = Double(MonotonicClock.nowNs() - buildStart) / 1e9

        let source = DatabaseActivitySource(database: database)
        let inboxLRU = InboxLRU(capacity: capacity, activitySource: source) { _ in IdleResources() }
        let launchStart = MonotonicClock.nowNs()
        let ranked = try database.read { conn in try InboxRankingRepository.rankedByActivity(limit: inboxes, on: conn) }
        try await inboxLRU.launch(ranked: ranked.map { InboxActivity(inboxId: $0.inboxId, lastActivityMs: $0.lastActivityAt ?? 0) },
                                 pendingInvites: [])
        let launchMs = Double(MonotonicClock.nowNs() - launchStart) / 1e6

        // Each round 20 other inboxes become the most active in the database, then rebalance.
        var samples: [Double] = []
        for round in 1...rounds {
            let hot = (0..<capacity).map { BulkFixture.inboxId((round * 331 + $0 * 17) % inboxes) }
            let at = base + Int64(round * 1_000)
            try await database.write { conn in
                for (offset, inboxId) in hot.enumerated() { try InboxWriter.touch(inboxId: inboxId, at: at - Int64(offset), on: conn) }
            }
            let start = MonotonicClock.nowNs()
            try await inboxLRU.rebalance()
            samples.append(Double(MonotonicClock.nowNs() - start) / 1e6)
        }
        samples.sort()
        let awake = await inboxLRU.awakeCount
        return Figures(messages: messages, buildSeconds: buildSeconds, launchMs: launchMs,
                       rebalanceMedianMs: samples[samples.count / 2],
                       rebalanceP99Ms: samples[min(samples.count - 1, samples.count * 99 / 100)], awake: awake)
    }

    private struct IdleResources: AwakeInboxResources {
        func activate() async throws {}
        func release() async {}
    }
}
