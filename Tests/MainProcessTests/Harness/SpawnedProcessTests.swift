import Foundation
import Testing
import TestSupport

/// The harness's daemons are reaped by their own `waitpid` (`SpawnedProcess`), not by
/// Foundation's `Process`, whose exit monitor on Linux waits on one child at a time: a daemon
/// that exited beside a long-lived child stayed a zombie and `waitUntilExit` hung a relay suite
/// (issue #32).
@Suite("Harness: spawned processes")
struct SpawnedProcessTests {
    @Test("an exit and a signal are told apart and reaped at once, while a long-lived child of Foundation's Process runs beside them")
    func reapedBesideALongLivedChild() throws {
        let longLived = Process()
        longLived.executableURL = URL(fileURLWithPath: "/bin/sleep")
        longLived.arguments = ["120"]
        try longLived.run()
        defer { longLived.terminate() }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("spawned-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }

        let exits = try SpawnedProcess.launch("/bin/sh", ["-c", "echo to-the-log; exit 3"], environment: ["PATH": "/bin"], log: log)
        exits.waitUntilExit()
        #expect(!exits.isRunning)
        #expect(exits.terminationReason == .exit && exits.terminationStatus == 3)
        #expect(try String(contentsOfFile: log, encoding: .utf8).contains("to-the-log"))

        let killed = try SpawnedProcess.launch("/bin/sleep", ["120"], environment: [:], log: log)
        #expect(killed.isRunning)
        kill(killed.processIdentifier, SIGKILL)
        killed.waitUntilExit()
        #expect(killed.terminationReason == .uncaughtSignal && killed.terminationStatus == SIGKILL)
        #expect(longLived.isRunning)
    }

    @Test("TestSupport starts no child through Foundation's Process")
    func noFoundationProcessInTheHarness() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("TestSupport")
        let files = try FileManager.default.contentsOfDirectory(atPath: root.path).filter { $0.hasSuffix(".swift") }
        #expect(files.count > 10)
        let offenders = try files.filter { name in
            try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8).split(separator: "\n")
                .contains { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") && $0.contains("Process()") }
        }
        #expect(offenders.isEmpty, "Foundation's Process in \(offenders)")
    }
}
