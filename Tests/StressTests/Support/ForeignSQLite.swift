import Foundation
import TestSupport

/// A foreign `sqlite3` process on the shared database, like a user's shell or a backup
/// tool: in a loop it holds a read transaction across a pause (pinning a WAL snapshot, so
/// checkpoints cannot finish) and then a short write lock (`BEGIN IMMEDIATE` across a
/// pause, so every worker must wait for it). It uses a 10 s busy timeout of its own.
///
/// ```swift
/// let foreign = try ForeignSQLite.start(databasePath: group.databasePath)
/// … storm …
/// let report = foreign.stop()   // cycles, errors
/// ```
final class ForeignSQLite: @unchecked Sendable {
    private let child: ChildProcess
    private let stopFlag = Locked(false)
    private let finished = DispatchSemaphore(value: 0)
    private let counters = Locked((cycles: 0, errors: [String]()))
    let readHoldSeconds: Double
    let writeHoldSeconds: Double

    private init(child: ChildProcess, readHoldSeconds: Double, writeHoldSeconds: Double) {
        self.child = child
        self.readHoldSeconds = readHoldSeconds
        self.writeHoldSeconds = writeHoldSeconds
    }

    static func start(databasePath: String, readHoldSeconds: Double = 0.05, writeHoldSeconds: Double = 0.01) throws -> ForeignSQLite {
        let child = try ChildProcess.launch("/usr/bin/sqlite3", [databasePath])
        let foreign = ForeignSQLite(child: child, readHoldSeconds: readHoldSeconds, writeHoldSeconds: writeHoldSeconds)
        child.write(".timeout 10000\n")
        Thread { foreign.drive() }.start()
        Thread { foreign.collectErrors() }.start()
        return foreign
    }

    /// Stops after the current cycle; returns the number of completed cycles and any error
    /// lines sqlite3 printed (a `database is locked` would be one).
    func stop() -> (cycles: Int, errors: [String]) {
        stopFlag.update { $0 = true }
        finished.wait()
        _ = child.waitForExit()
        return counters.value
    }

    private func drive() {
        var cycle = 0
        while !stopFlag.value {
            cycle += 1
            child.write("""
                BEGIN; SELECT count(*) FROM message; SELECT max(seq) FROM change_log;
                .shell sleep \(readHoldSeconds)
                COMMIT;
                BEGIN IMMEDIATE;
                .shell sleep \(writeHoldSeconds)
                COMMIT;
                .print cycle-\(cycle)

                """)
            guard child.waitForLine(containing: "cycle-\(cycle)") != nil else { break }
            counters.update { $0.cycles = cycle }
        }
        finished.signal()
    }

    private func collectErrors() {
        while let line = child.readStderrLine() {
            counters.update { $0.errors.append(line) }
        }
    }
}
