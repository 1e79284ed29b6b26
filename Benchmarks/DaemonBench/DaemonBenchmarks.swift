import DaemonCore
import DaemonEngine
import Dispatch
import Foundation
import SharedStore
import SottoClient
import SottoCrypto
import SottoDaemon
import SottoWire

/// The daemon's in-memory benchmarks, printed as figures and ratios in one run. Lives in
/// MainProcess because an executable's module cannot be imported by another executable.
///
/// ```swift
/// DaemonBenchmarks.run()     // what the hidden `sotto benchmark` runs (Benchmarks/daemon-bench.sh)
/// ```
enum DaemonBenchmarks {
    static func run(databaseOnly: Bool = false) {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await runAll(databaseOnly: databaseOnly)
            done.signal()
        }
        done.wait()
    }

    private static func runAll(databaseOnly: Bool) async {
        do {
            if !databaseOnly {
                print("== sotto daemon benchmarks (in-memory core) ==")
                try await appendBenchmark()
                try await rebalanceBenchmark()
                try await unusedInboxBenchmark()
            }
            try await rebalanceDatabaseBenchmark()
        } catch {
            print("benchmark failed: \(error)")
        }
    }

    // MARK: Rebalance on a real database

    private static func rebalanceDatabaseBenchmark() async throws {
        print("== rebalance on a real database: 10,000 inboxes, ranking by InboxRankingRepository.rankedByActivity ==")
        let small = try await RebalanceDatabaseBenchmark.run(messages: 10_000)
        let large = try await RebalanceDatabaseBenchmark.run(messages: 1_000_000)
        for figures in [small, large] {
            print("messages \(figures.messages): rebalance median \(format(figures.rebalanceMedianMs, unit: "ms")), "
                  + "p99 \(format(figures.rebalanceP99Ms, unit: "ms")), launch \(format(figures.launchMs, unit: "ms")), "
                  + "awake \(figures.awake)   (database built in \(String(format: "%.1f", figures.buildSeconds)) s)")
        }
        print("  ratio 1,000,000 / 10,000 messages: median \(String(format: "%.2f", large.rebalanceMedianMs / small.rebalanceMedianMs)), "
              + "p99 \(String(format: "%.2f", large.rebalanceP99Ms / small.rebalanceP99Ms))   (goal: ≤ 5 ms, flat in messages)")
    }

    // MARK: Conversation store

    private static func appendBenchmark() async throws {
        let batch = 2_000
        let rounds = 9
        var small: [Double] = []
        var large: [Double] = []
        var atCap: [Double] = []
        var pureSmall: [Double] = []
        var pureLarge: [Double] = []
        for _ in 0..<rounds {
            small.append(try await perAppendNs(history: 10, cap: 1_000_000, batch: batch))
            large.append(try await perAppendNs(history: 100_000, cap: 1_000_000, batch: batch))
            atCap.append(try await perAppendNs(history: 10_000, cap: 10_000, batch: batch))
            pureSmall.append(try perTimelineAppendNs(history: 10, batch: batch))
            pureLarge.append(try perTimelineAppendNs(history: 100_000, batch: batch))
        }
        let s = median(small), l = median(large)
        print("append, store actor, history 10:       \(format(s)) ns/append (median of \(rounds) × \(batch))")
        print("append, store actor, history 100,000:  \(format(l)) ns/append")
        print("  ratio 100,000 / 10 = \(String(format: "%.2f", l / s))   (goal ≤ 1.2)")
        let ps = median(pureSmall), pl = median(pureLarge)
        print("append, timeline only, history 10:     \(format(ps)) ns/append")
        print("append, timeline only, history 100,000: \(format(pl)) ns/append   ratio \(String(format: "%.2f", pl / ps))")
        print("append at cap 10,000 (drops oldest):   \(format(median(atCap))) ns/append")

        // Long runs include the array and index growth the short window above may not reach.
        let longSmall = try await perAppendNs(history: 10, cap: 1_000_000, batch: 50_000)
        let longLarge = try await perAppendNs(history: 100_000, cap: 1_000_000, batch: 50_000)
        print("append, 50,000 in a row, history 10 / 100,000: \(format(longSmall)) / \(format(longLarge)) ns/append"
              + "   ratio \(String(format: "%.2f", longLarge / longSmall))")

        let store = try ConversationWindow(conversationId: "c", cap: 1_000_000,
                                          history: history(count: 100_000))
        let t0 = MonotonicClock.nowNs()
        try await store.append(message(index: 50_000, sentAtMs: 50_000 * 10 + 5))   // lands mid-timeline
        print("out-of-order insert, history 100,000:  \(format(Double(MonotonicClock.nowNs() - t0))) ns")
    }

    private static func perAppendNs(history count: Int, cap: Int, batch: Int) async throws -> Double {
        let store = try ConversationWindow(conversationId: "c", cap: cap, history: history(count: count))
        let fresh = (0..<batch).map { message(index: count + $0, sentAtMs: Int64(count + $0) * 10) }
        let t0 = MonotonicClock.nowNs()
        for m in fresh { try await store.append(m) }
        return Double(MonotonicClock.nowNs() - t0) / Double(batch)
    }

    private static func perTimelineAppendNs(history count: Int, batch: Int) throws -> Double {
        var timeline = try ConversationTimeline(conversationId: "c", cap: 1_000_000,
                                                history: history(count: count))
        let fresh = (0..<batch).map { message(index: count + $0, sentAtMs: Int64(count + $0) * 10) }
        let t0 = MonotonicClock.nowNs()
        for m in fresh { _ = try timeline.append(m) }
        return Double(MonotonicClock.nowNs() - t0) / Double(batch)
    }

    private static func history(count: Int) -> [TimelineMessage] {
        (0..<count).map { message(index: $0, sentAtMs: Int64($0) * 10) }
    }

    private static func message(index: Int, sentAtMs: Int64) -> TimelineMessage {
        TimelineMessage(id: "msg-\(index)", conversationId: "c", senderInboxId: "peer",
                        sentAtMs: sentAtMs, text: "message number \(index)",
                        isOutgoing: index % 3 == 0, deliveryStatus: .received)
    }

    // MARK: Inbox lifecycle

    private static func rebalanceBenchmark() async throws {
        let inboxes = 10_000
        let base: Int64 = 1_700_000_000_000
        let ranked = (0..<inboxes).map { InboxActivity(inboxId: "inbox-\($0)", lastActivityMs: base - Int64($0)) }
        let source = SwitchableRanking(ranked)
        let inboxLRU = InboxLRU(capacity: 20, activitySource: source) { _ in NoopResources() }

        let t0 = MonotonicClock.nowNs()
        try await inboxLRU.launch(ranked: ranked, pendingInvites: ["inbox-5000", "inbox-9999"])
        let launchNs = Double(MonotonicClock.nowNs() - t0)

        // Each round, 20 other inboxes become the most active, as the database index would say.
        var samples: [Double] = []
        for round in 1...30 {
            let hot = (0..<20).map { "inbox-\((round * 331 + $0 * 17) % inboxes)" }
            let newer = hot.enumerated().map {
                InboxActivity(inboxId: $1, lastActivityMs: base + Int64(round * 100 - $0))
            }
            await source.set(newer + ranked)
            let start = MonotonicClock.nowNs()
            try await inboxLRU.rebalance()
            samples.append(Double(MonotonicClock.nowNs() - start))
        }
        let snapshot = await inboxLRU.snapshot()
        print("launch, 10,000 ranked inboxes:         \(format(launchNs / 1e6, unit: "ms"))")
        print("rebalance, 10,000 inboxes (20 swapped): median \(format(median(samples) / 1e6, unit: "ms")), "
              + "max \(format(samples.max()! / 1e6, unit: "ms"))   (goal ≤ 5 ms)")
        print("  awake after: \(snapshot.awake.count), sleeping: \(snapshot.sleepingCount)")
    }

    // MARK: Unused inbox

    private static func unusedInboxBenchmark() async throws {
        for (name, vault) in [("in-memory vault", InMemoryIdentityVault() as any IdentityVault),
                              ("keystore vault (fsync'd, sealed)", try KeystoreIdentityVault(keystore: benchmarkKeystore()))] {
            let cache = UnusedInboxCache(vault: vault) {
                Identity.generate()
            }
            var samples: [Double] = []
            for _ in 0..<200 {
                try await cache.replenish()
                let t0 = MonotonicClock.nowNs()
                _ = try await cache.consume()
                samples.append(Double(MonotonicClock.nowNs() - t0))
            }
            try await cache.replenish()
            let hits = await cache.stats.hits
            samples.sort()
            print("unused-inbox consume hit, \(name): median \(format(median(samples) / 1e3, unit: "µs")), "
                  + "p99 \(format(samples[samples.count * 99 / 100] / 1e3, unit: "µs"))   (goal ≤ 5 ms; \(hits) hits)")
        }
    }

    // MARK: Helpers

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }

    private static func format(_ value: Double, unit: String = "") -> String {
        let text = value >= 100 ? String(format: "%.0f", value) : String(format: "%.3f", value)
        return unit.isEmpty ? text : "\(text) \(unit)"
    }
}

// MARK: Stand-ins for the database and the keystore

private struct NoopResources: AwakeInboxResources {
    func activate() async throws {}
    func release() async {}
}

/// A ranking the benchmark rewrites between rounds; honours `limit` like an indexed query.
private actor SwitchableRanking: InboxActivitySource {
    private var ranked: [InboxActivity]
    init(_ ranked: [InboxActivity]) { self.ranked = ranked }
    func set(_ ranked: [InboxActivity]) { self.ranked = ranked }
    func rankedInboxes(limit: Int) -> [InboxActivity] { Array(ranked.prefix(limit)) }
}

/// Writes the slot to a temporary file and fsyncs it, like a durable keystore would (the keys
/// are throwaway benchmark keys). Removed at the end.
private func benchmarkKeystore() throws -> Keystore {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sotto-bench-\(SecureRandom.uuidV4())")
    return try Keystore(directory: directory.path, environment: [:], createIfMissing: true)
}
