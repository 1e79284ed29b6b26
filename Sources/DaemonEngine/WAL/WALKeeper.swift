import Foundation
import DaemonStore
import ServiceLifecycle
import SharedStore

/// The daemon owns WAL upkeep (docs/adr/0003): while it runs, workers never checkpoint. A
/// worker resets the WAL only through SQLite's last-connection close, which needs an EXCLUSIVE
/// lock this daemon's open connections always deny (docs/adr/0020: the daemon-down case). It
/// is the daemon's only checkpointer: whoever needs the WAL reset now (an explode, so no
/// frame keeps deleted plaintext) asks it with ``checkpointSoon()``.
///
/// - When idle (no commit seen for `idleAfter`), a PASSIVE checkpoint copies what it can
///   without waiting on anyone.
/// - When the WAL grows past `truncateAboveBytes`, a TRUNCATE checkpoint with a short busy
///   budget resets it to zero bytes; if readers or writers keep it busy, it backs off
///   (doubling up to `maxBackoff`) and tries again, so a push storm is never stalled by it.
///
/// ```swift
/// let keeper = WALKeeper(database: db, walPath: group.databasePath + "-wal")
/// await keeper.noteCommit()   // run by the daemon's service group (DaemonServices)
/// await keeper.checkpointSoon()   // after deleting rows whose plaintext must leave the WAL
/// ```
public actor WALKeeper: Service {
    struct Policy: Sendable {
        var tick: Duration = .milliseconds(500)
        var idleAfter: Duration = .seconds(2)
        var truncateAboveBytes: Int64 = 8 * 1024 * 1024
        var checkpointBusyMs: Int32 = 50
        var maxBackoff: Duration = .seconds(30)
        /// The connection's normal busy timeout, restored after a checkpoint.
        var normalBusyMs: Int32 = 10_000

        /// The defaults, with the TRUNCATE budget from `SOTTO_WAL_TRUNCATE_BYTES` when set
        /// (4 KiB … 1 GiB; anything else is a start-up error, not a silent default).
        init(environment: [String: String], normalBusyMs: Int32) throws {
            self.normalBusyMs = normalBusyMs
            if let text = environment["SOTTO_WAL_TRUNCATE_BYTES"] {
                guard let bytes = Int64(text), (4096...(1 << 30)).contains(bytes) else {
                    throw ConfigurationError(description: "SOTTO_WAL_TRUNCATE_BYTES must be 4096…1073741824 bytes")
                }
                truncateAboveBytes = bytes
            }
        }

        init() {}
    }

    struct ConfigurationError: Error, CustomStringConvertible {
        let description: String
    }

    struct Stats: Sendable, Equatable {
        var passive = 0
        var truncated = 0
        var busy = 0
        var lastWALBytes: Int64 = 0
    }

    private let database: DaemonDatabase
    private let walPath: String
    private let policy: Policy
    private let clock = ContinuousClock()
    private var lastCommit: ContinuousClock.Instant
    private var idleCheckpointDone = true
    private var backoff: Duration
    private var nextTruncateAttempt: ContinuousClock.Instant
    private(set) var stats = Stats()
    private let pause = WakeSignal()
    /// A TRUNCATE someone asked for (``checkpointSoon()``) that has not succeeded yet: the
    /// ticks retry it with the usual backoff whatever the WAL's size.
    private var truncateRequested = false

    init(database: DaemonDatabase, walPath: String, policy: Policy = Policy()) {
        self.database = database
        self.walPath = walPath
        self.policy = policy
        self.lastCommit = ContinuousClock.now
        self.backoff = policy.tick
        self.nextTruncateAttempt = ContinuousClock.now
    }

    func noteCommit() {
        lastCommit = clock.now
        idleCheckpointDone = false
    }

    /// Ticks until the daemon's graceful shutdown, then ticks once more: it is the last part
    /// to stop, so that tick sees every commit this process made.
    public func run() async {
        let tickMs = policy.tick.wholeMilliseconds
        await withGracefulShutdownHandler {
            while !Task.isShuttingDownGracefully, !Task.isCancelled {
                await pause.sleep(until: nil, atMostMs: tickMs)
                guard !Task.isShuttingDownGracefully else { return }
                tick()
            }
        } onGracefulShutdown: { [pause] in
            pause.finish()
        }
        tick()
    }

    /// One upkeep decision; public for tests and benchmarks.
    func tick() {
        let walBytes = Self.fileSize(walPath)
        stats.lastWALBytes = walBytes
        let now = clock.now
        if walBytes > policy.truncateAboveBytes || truncateRequested, now >= nextTruncateAttempt {
            truncate(now: now)
            return
        }
        if !idleCheckpointDone, now - lastCommit >= policy.idleAfter {
            if checkpoint(.passive) { stats.passive += 1 }
            idleCheckpointDone = true
        }
    }

    /// Resets the WAL now, for a caller that just deleted rows whose old frames must leave the
    /// WAL (an explode, ADR 0016): tries every `retryEvery` while readers or writers hold it
    /// back, for at most `within`; after that the ticks keep trying (with the usual backoff)
    /// until it succeeds. True when the WAL was reset before this returned.
    @discardableResult
    func checkpointSoon(within: Duration = .seconds(2), retryEvery: Duration = .milliseconds(100)) async -> Bool {
        truncateRequested = true
        let deadline = clock.now + within
        while truncateRequested {
            truncate(now: clock.now)
            guard truncateRequested else { return true }
            guard clock.now < deadline, !Task.isCancelled else { break }
            try? await Task.sleep(for: retryEvery)
        }
        return !truncateRequested
    }

    /// One TRUNCATE attempt; a busy one backs off (doubling up to `maxBackoff`).
    private func truncate(now: ContinuousClock.Instant) {
        if checkpoint(.truncate) {
            stats.truncated += 1
            stats.lastWALBytes = Self.fileSize(walPath)
            backoff = policy.tick
            nextTruncateAttempt = now
            idleCheckpointDone = true
            truncateRequested = false
        } else {
            stats.busy += 1
            backoff = min(backoff * 2, policy.maxBackoff)
            nextTruncateAttempt = now + backoff
        }
    }

    /// Runs a checkpoint on the writer connection with a short busy budget. True when it
    /// completed (every frame copied back; for TRUNCATE, the WAL reset).
    private func checkpoint(_ mode: WALCheckpoint.Mode) -> Bool {
        let budget = policy.checkpointBusyMs
        let normal = policy.normalBusyMs
        return database.withWriterConnection { conn in
            WALCheckpoint.run(mode, busyBudgetMs: budget, normalBusyMs: normal, on: conn)
        }
    }

    static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }
}
