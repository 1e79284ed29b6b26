import Foundation
import SharedStore
import Testing
import TestSupport

extension StressSuite {
/// Issue #10, "the worker alone": with the daemon stopped, every push is a worker that starts
/// with nobody holding the database. Before the fix each one recovered the whole persistent
/// WAL (≈ 41 KB more per push, never reset) and per-push cost grew without bound. Short
/// profile here; `make stress` runs 3,000 pushes against the release build.
@Suite("Stress: the worker alone")
struct WorkerAloneTests {
    /// The worker's default reset threshold (`WALReset.defaultAboveBytes`, docs/adr/0020).
    static let resetBytes: Int64 = 1 << 20
    /// The threshold plus room for the push that crosses it.
    static let walBoundBytes: Int64 = resetBytes + 128 * 1024

    @Test("No daemon, no held connection: WAL bounded, per-push CPU flat; with a holder the worker leaves the WAL alone")
    func aloneWorkerKeepsWALBounded() async throws {
        let profile = StressProfile.current
        let worker = try profile.executable("sotto-notify")
        let fixture = try StormFixture()
        let walPath = fixture.group.databasePath + "-wal"
        let pushes = fixture.sealPushes(count: profile.alonePushes + 40)
        let alone = Array(pushes.prefix(profile.alonePushes))
        let window = profile.aloneWindow

        let run = try await onDedicatedThread {
            try AlonePushes.run(worker: worker, payloads: alone.map(\.payload), environment: fixture.environment,
                                walPath: walPath)
        }
        print("STRESS worker alone (\(profile.name), \(alone.count) pushes):")
        for line in run.summary(window: window) { print("  " + line) }

        #expect(run.failedExits == 0)
        // Deterministic: no worker recovers more than the bound, and the WAL ends under it.
        #expect(run.maxWALBytesBefore <= Self.walBoundBytes, "a worker started with \(run.maxWALBytesBefore) B of WAL")
        #expect(run.samples.last?.walBytesAfter ?? .max <= Self.walBoundBytes)
        // CPU time of each worker (not wall time: the machine is shared): flat within 1.3× over
        // the full profile's 500-push windows (`make stress`). The short profile's windows are
        // small enough for a loaded machine to reach 1.33 with the fix in place, so there the
        // ratio is only printed: the WAL bound above is what fails without the fix, whatever
        // the load.
        if profile.name == "full" {
            #expect(run.cpuRatio(window: window) <= 1.3, "cpu p50 last/first \(run.cpuRatio(window: window))")
        }

        // With another process attached (as the daemon always is), the worker never resets
        // the WAL: upkeep stays with the daemon's WALKeeper (docs/adr/0003). (These 40 pushes
        // stay under SQLite's own 1000-page autocheckpoint, which may restart a larger WAL.)
        let holder = try LoggedProcess.launch("/usr/bin/sqlite3", [fixture.group.databasePath],
                                              environment: fixture.environment)
        defer { holder.closeStdin(); _ = holder.waitForExit() }
        holder.write("SELECT count(*) FROM sqlite_master;\nSELECT 'held';\n")
        #expect(holder.waitForLine(containing: "held", timeout: 30))
        let held = try await onDedicatedThread {
            try AlonePushes.run(worker: worker, payloads: pushes.suffix(40).map(\.payload),
                                environment: fixture.environment, walPath: walPath)
        }
        #expect(held.failedExits == 0)
        #expect(held.samples.allSatisfy { $0.walBytesAfter >= $0.walBytesBefore }, "a worker shrank the WAL while another process held the database")
        #expect(held.samples.last?.walBytesAfter ?? 0 > Self.resetBytes, "the WAL never passed the threshold")

        let conn = try SQLiteConnection.open(path: fixture.group.databasePath, profile: .worker)
        #expect(try conn.queryOne("SELECT count(*) FROM message")?.int64(0) == Int64(pushes.count))
        #expect(try conn.queryOne("PRAGMA integrity_check")?.string(0) == "ok")
    }
}
}
