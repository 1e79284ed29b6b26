import DaemonStore
import Foundation
import SharedStore
import Testing
import TestSupport

@Suite("Store across real processes", .serialized)
struct MultiProcessTests {
    func messageCount(_ f: StoreFixture) throws -> Int64 {
        try MessageRowRepository.count(conversationId: f.conversationId, on: f.open())
    }

    @Test func twoProcessesWritingAtOnceLoseNothing() throws {
        let f = try StoreFixture()
        let probe = try builtExecutable("sotto-store-probe")
        let perProcess = 200
        let a = try ChildProcess.launch(probe, [f.directory.path, String(perProcess)])
        let b = try ChildProcess.launch(probe, [f.directory.path, String(perProcess)])
        let summaryA = a.waitForLine(containing: "written=")
        let summaryB = b.waitForLine(containing: "written=")
        #expect(a.waitForExit() == 0, "\(summaryA ?? "no summary")")
        #expect(b.waitForExit() == 0, "\(summaryB ?? "no summary")")
        #expect(summaryA == "written=\(perProcess) duplicate=0 busy=0 failed=0")
        #expect(summaryB == "written=\(perProcess) duplicate=0 busy=0 failed=0")
        #expect(try messageCount(f) == Int64(2 * perProcess))
        let conn = try f.open()
        let pids = try conn.query("SELECT DISTINCT writerPid FROM change_log WHERE kind = 'messageInserted'")
        #expect(pids.count == 2)
        #expect(try LocalStateRepository.state(of: f.conversationId, on: conn)?.unreadCount == Int64(2 * perProcess))
    }

    /// Starts `sqlite3` on the database and holds `BEGIN IMMEDIATE` until `COMMIT;` is sent.
    func holdWriteLock(_ f: StoreFixture) throws -> ChildProcess {
        let cli = try ChildProcess.launch("/usr/bin/sqlite3", [f.directory.databasePath])
        cli.write("BEGIN IMMEDIATE;\nSELECT 'locked';\n")
        #expect(cli.waitForLine(containing: "locked") != nil)
        return cli
    }

    @Test func writerWaitsForAShortForeignLock() throws {
        let f = try StoreFixture()
        let cli = try holdWriteLock(f)
        let writer = try ChildProcess.launch(try builtExecutable("sotto-store-probe"), [f.directory.path, "1"],
                               environment: ["SOTTO_BUSY_TIMEOUT_MS": "10000"])
        #expect(writer.waitForLine(containing: "ready") != nil)
        // Released only once the writer waits for the lock (its busy handler sleeps).
        #expect(ProcessProbe.waitUntilSleeping(pid: writer.pid, timeout: 10), "the writer never waited for the lock")
        #expect(try messageCount(f) == 0)
        cli.write("COMMIT;\n.quit\n")
        let summary = writer.waitForLine(containing: "written=")
        #expect(writer.waitForExit() == 0)
        #expect(summary == "written=1 duplicate=0 busy=0 failed=0")
        #expect(cli.waitForExit() == 0)
        #expect(try messageCount(f) == 1)
    }

    @Test func writerGivesUpBusyOnALongForeignLockAndWritesNothing() throws {
        let f = try StoreFixture()
        let before = try rowCounts(f.open())
        let cli = try holdWriteLock(f)
        let writer = try ChildProcess.launch(try builtExecutable("sotto-store-probe"), [f.directory.path, "1"],
                               environment: ["SOTTO_BUSY_TIMEOUT_MS": "300"])
        let summary = writer.waitForLine(containing: "written=")
        #expect(writer.waitForExit() == 3)   // the lock is still held: the writer exited on its own
        #expect(summary == "written=0 duplicate=0 busy=1 failed=0")
        cli.write("COMMIT;\n.quit\n")
        #expect(cli.waitForExit() == 0)
        #expect(try rowCounts(f.open()) == before)
    }
}
