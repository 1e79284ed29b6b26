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
    private let child: LoggedProcess
    private let stopFlag = Locked(false)
    private let finished = DispatchSemaphore(value: 0)
    private let cycles = Locked(0)
    let readHoldSeconds: Double
    let writeHoldSeconds: Double

    private init(child: LoggedProcess, readHoldSeconds: Double, writeHoldSeconds: Double) {
        self.child = child
        self.readHoldSeconds = readHoldSeconds
        self.writeHoldSeconds = writeHoldSeconds
    }

    static func start(databasePath: String, readHoldSeconds: Double = 0.05, writeHoldSeconds: Double = 0.01) throws -> ForeignSQLite {
        let child = try LoggedProcess.launch("/usr/bin/sqlite3", [databasePath], environment: ProcessInfo.processInfo.environment)
        let foreign = ForeignSQLite(child: child, readHoldSeconds: readHoldSeconds, writeHoldSeconds: writeHoldSeconds)
        child.write(".timeout 10000\n")
        Thread { foreign.drive() }.start()
        return foreign
    }

    /// Stops after the current cycle; returns the number of completed cycles and any error
    /// lines sqlite3 printed (a `database is locked` would be one).
    func stop() -> (cycles: Int, errors: [String]) {
        stopFlag.update { $0 = true }
        finished.wait()
        child.closeStdin()
        _ = child.waitForExit()
        let errors = child.output.filter { $0.localizedCaseInsensitiveContains("error") || $0.contains("locked") }
        return (cycles.value, errors)
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
            guard child.waitForLine(containing: "cycle-\(cycle)", timeout: 120) else { break }
            cycles.update { $0 = cycle }
        }
        finished.signal()
    }
}
