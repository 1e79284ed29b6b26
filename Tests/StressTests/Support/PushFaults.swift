import Foundation
import SharedStore
import SottoWire
import TestSupport

/// Issue #21: the Nth write (or fsync) of a push fails with EIO or ENOSPC, for N = 1, 2, …
/// until the push no longer reaches its Nth. Each faulted push must be answered with a
/// retryable error and leave nothing stored and the file sound; sent again once the fault
/// goes, it is stored exactly once.
///
/// ```swift
/// let report = try PushFaults(fault: .sync, error: "EIO").run()
/// #expect(report.findings.isEmpty)
/// ```
struct PushFaults {
    let fault: PowerCutFileSystem.Fault
    let error: String
    var maxSteps = 40

    struct Report {
        var faultedSteps = 0
        var stepsBeyondPush = false
        var findings: [String] = []
        var label = ""

        var summaryLine: String {
            "POWER faults \(label): faulted steps=\(faultedSteps) passed the push=\(stepsBeyondPush) findings=\(findings.count)"
        }
    }

    func run() throws -> Report {
        var report = Report(label: "\(fault) \(error)")
        let tmp = try TemporaryDirectory(prefix: "sotto-faults")
        let disk = try PowerCutFileSystem.mount(in: tmp.path)
        defer { disk.abandon() }
        let fixture = try StormFixture(groupPath: disk.mountpoint + "/group")
        try disk.syncEverything()
        let socket = fixture.tmp.path + "/push.sock"
        let server = try PushSocketServer.start(socketPath: socket, accept: true, command: [try builtExecutable("sotto-notify")],
                                                environment: fixture.environment)
        defer { server.stop() }
        let pushes = fixture.sealPushes(count: maxSteps)

        for (step, push) in pushes.enumerated() {
            try disk.fail(fault, first: step + 1, error: error)
            let faulted = try PushClient.send(push.payload, to: socket)
            switch PushAck.parse(Array(faulted.utf8)) {
            case .ok(let id, _)? where id == push.messageId:
                // The push needs fewer than step + 1 of them: every one was faulted once.
                report.stepsBeyondPush = true
                if try stored(push.messageId, fixture) != 1 { report.findings.append("step \(step + 1): acked ok, not stored once") }
            case .error(let refusal)? where refusal.code.retry:
                report.faultedSteps += 1
                if try stored(push.messageId, fixture) != 0 {
                    report.findings.append("step \(step + 1): refused (\(refusal.code.rawValue)) yet stored")
                }
            default:
                report.findings.append("step \(step + 1): answered \(faulted.prefix(120))")
            }
            try disk.clearFaults()
            let integrity = try conn(fixture).query("PRAGMA integrity_check").map { try $0.string(0) }.joined()
            if integrity != "ok" { report.findings.append("step \(step + 1): integrity \(integrity.prefix(120))") }
            // The fault is gone: the same push again is stored exactly once.
            let again = try PushClient.send(push.payload, to: socket)
            guard case .ok? = PushAck.parse(Array(again.utf8)), try stored(push.messageId, fixture) == 1 else {
                report.findings.append("step \(step + 1): after the fault answered \(again.prefix(120))")
                continue
            }
            if report.stepsBeyondPush { break }
        }
        return report
    }

    private func conn(_ fixture: StormFixture) throws -> SQLiteConnection {
        try SQLiteConnection.open(path: fixture.group.databasePath, profile: .worker)
    }

    private func stored(_ id: String, _ fixture: StormFixture) throws -> Int64 {
        try conn(fixture).query("SELECT count(*) FROM message WHERE id = ?", [.text(id)])[0].int64(0)
    }
}
