import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport

/// Issue #21: the Nth write (or fsync) on alice's disk fails with EIO or ENOSPC while she runs
/// `sotto explode <conversation>` (immediate; docs/adr/0016), for N = 1, 2, … until an explode
/// no longer reaches its Nth. Each conversation has one member, a socket that acks every push.
/// A faulted explode exits non-zero with a clear error, or completes; once the fault is gone
/// the conversation is whole (no explosion committed: an explode then succeeds) or gone (rows,
/// identity, alias and tombstone), never half, within a sweep or a daemon restart (which
/// finishes a tombstone); the file stays sound and the daemon alive.
///
/// ```swift
/// let report = try ExplodeFaults(fault: .sync, error: "EIO").run()
/// #expect(report.faultedSteps > 0 && report.stepsBeyondExplode && report.findings.isEmpty)
/// ```
struct ExplodeFaults {
    let fault: PowerCutFileSystem.Fault
    let error: String
    /// Every N up to this, then every `stride`-th: a short run still meets each transaction of
    /// the explode (its commit, the deletion, the keystore wipe, the tombstone's end).
    var denseSteps = 400
    var stride = 1
    var maxSteps = 400

    /// Every N under the full profile; under the short one every N up to 12, then every 5th.
    init(fault: PowerCutFileSystem.Fault, error: String, profile: StressProfile = .current) {
        self.fault = fault
        self.error = error
        if profile.name != "full" { (denseSteps, stride) = (12, 5) }
    }

    struct Report {
        var label = ""
        var steps = 0
        /// Explodes that failed because of the armed fault.
        var faultedSteps = 0
        /// Of those, the ones whose explosion had committed: the user read an error, the
        /// conversation was deleted anyway (members told).
        var failedAfterCommit: [Int] = []
        /// Explodes that exited 0 while the fault was met.
        var okAfterFault: [Int] = []
        /// An explode exited 0 without reaching its Nth: the loop passed the explode's own writes.
        var stepsBeyondExplode = false
        /// Daemon restarts needed to finish a tombstoned explode.
        var restarts = 0
        var errors: Set<String> = []
        var findings: [String] = []
        var seconds = 0.0
        /// One entry per step: "N:ok", "N:err", with "-unmet" when the fault was not met.
        var trace: [String] = []

        var summaryLine: String {
            "POWER explode faults \(label): steps=\(steps) faulted=\(faultedSteps) failed after commit=\(failedAfterCommit) "
                + "ok after the fault=\(okAfterFault) passed the explode=\(stepsBeyondExplode) restarts=\(restarts) "
                + "findings=\(findings.count) seconds=\(String(format: "%.1f", seconds)) errors=\(errors.sorted()) trace=\(trace.joined(separator: " "))"
        }
    }

    func run() throws -> Report {
        var report = Report(label: "\(fault) \(error)")
        let started = Date()
        let tmp = try TemporaryDirectory(prefix: "sotto-explodefaults")
        let disk = try PowerCutFileSystem.mount(in: tmp.path)
        defer { disk.abandon() }
        let alice = try Device.start("alice", in: tmp.path, environment: ["SOTTO_EXPLODE_DELIVERY_MS": "3000"],
                                     groupIn: disk.mountpoint)
        defer { alice.stop() }
        let member = AckingPushSink(path: tmp.path + "/member.sock")
        let checks = FaultChecks(device: alice, error: error)
        var step = 1
        while step <= maxSteps, !report.stepsBeyondExplode {
            report.steps += 1
            let label = "step \(step)"
            let trip = try conversation(alice, member: "unix:" + member.path, step: step)
            let holding = try ExplodeHolding(device: alice, conversationId: trip)
            try disk.syncEverything()
            try disk.fail(fault, first: step, error: error)
            let result = try alice.cli(["explode", trip, "--json"])
            let met = try disk.seen(fault) >= step
            try disk.clearFaults()
            report.trace.append("\(step):\(result.status == 0 ? "ok" : "err")\(met ? "" : "-unmet")")
            let committed = try holding.committed()
            if result.status == 0 {
                if met { report.okAfterFault.append(step) } else { report.stepsBeyondExplode = true }
            } else {
                if met { report.faultedSteps += 1 } else { report.findings.append("\(label): failed without meeting the fault: \(result.stderr)") }
                if committed {
                    report.failedAfterCommit.append(step)
                    // The members have it: the error must say so, not only that the disk failed.
                    if !result.stderr.contains("the explosion went out") {
                        report.findings.append("\(label): failed after its commit without saying the explosion went out: \(result.stderr.prefix(200))")
                    }
                }
                if let unclear = checks.unclear(result.stderr) { report.findings.append("\(label): \(unclear)") }
                report.errors.insert(String(result.stderr.prefix(140)))
            }
            report.findings += try checks.afterFault(label, conversation: trip)
            report.findings += try settle(alice, holding, committed: committed, label: label, report: &report)
            step += step < denseSteps ? 1 : stride
        }
        // A last restart: nothing of any step is left to finish, in the database or the keystore.
        alice.stopDaemon()
        try alice.startDaemon()
        let tombstones = try alice.query("SELECT count(*) FROM inbox_tombstone")[0].int64(0)
        let conversations = try alice.query("SELECT count(*) FROM conversation")[0].int64(0)
        if tombstones != 0 || conversations != 0 {
            report.findings.append("after a restart: \(tombstones) tombstone(s), \(conversations) conversation(s) left")
        }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    /// A new conversation of alice's with one member reached at `endpoint` (added to its
    /// members as a joined device would be).
    private func conversation(_ alice: Device, member endpoint: String, step: Int) throws -> String {
        guard let id = try alice.json(["new", "--name", "Boom \(step)"])["conversationId"] as? String else {
            throw StressFailure("new returned no id")
        }
        _ = try RemoteMember.join(conversationId: id, databasePath: alice.group.databasePath, endpoint: endpoint)
        return id
    }

    /// Once the fault is gone: committed, the explode ends gone (a restart finishes a
    /// tombstone the daemon has not wiped yet); not committed, the conversation is whole and
    /// an explode now succeeds.
    private func settle(_ alice: Device, _ holding: ExplodeHolding, committed: Bool, label: String,
                        report: inout Report) throws -> [String] {
        if !committed {
            let now = try holding.state()
            guard now == .whole else { return ["\(label): nothing committed, yet alice holds \(now)"] }
            let again = try alice.cli(["explode", holding.conversationId, "--json"])
            guard again.status == 0 else { return ["\(label): explode after the fault: \(again.stderr.prefix(200))"] }
        }
        // The sweep retries what failed after the commit; the deletion is the explode's own last step.
        if (try? alice.waitUntil("\(label): alice deletes", timeoutMs: 3_000) { try holding.state() == .gone }) == nil {
            let before = try holding.state()
            report.restarts += 1
            alice.stopDaemon()
            try alice.startDaemon()
            if (try? alice.waitUntil("\(label): the restart finishes", timeoutMs: 20_000) { try holding.state() == .gone }) == nil {
                return ["\(label): alice holds \(try holding.state()) after a restart (before it: \(before))"]
            }
        }
        return []
    }
}
