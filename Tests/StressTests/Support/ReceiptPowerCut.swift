import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport

/// Issue #21 for delivery receipts (docs/protocol/receipts.md): bob owes alice a receipt for
/// her text; bob's group directory lies on the power-cut file system (docs/adr/0037) and his
/// daemon is killed at a named step of sending it, the power cut with it, then restarted.
/// `receipts.sealed` (sealed, not queued): the debt (`receipt_due`, which bob's worker
/// committed before acking the text) survives the cut, and the restart pays it once.
/// `notice.delivered` (alice's worker applied it, bob has not yet deleted its notice): the
/// restart sends it at most once more. Either way alice's push ends `delivered` and bob
/// owes nothing.
///
/// Each round has its own kind of cut (`PowerCutRound.plan`): all unsynced writes lost at
/// each step, and the last write torn or a random half kept.
///
/// ```swift
/// let report = try ReceiptPowerCut(rounds: ReceiptPowerCut.plan(full: false)).run()
/// print(report.summaryLine)   // STRESS receipt-power-cut: rounds=3 kills=3 … findings=0
/// ```
struct ReceiptPowerCut {
    static let points = ["receipts.sealed", "notice.delivered"]
    let rounds: [PowerCutRound<String>]

    /// Each step with `.all`; torn at `receipts.sealed` too (short), or each step with each kind (full).
    static func plan(full: Bool) -> [PowerCutRound<String>] {
        PowerCutRound.plan(steps: points, tornAt: "receipts.sealed", seed: 23, full: full)
    }

    typealias Report = CrashRoundsReport

    func run() throws -> Report {
        var report = Report(name: "receipt-power-cut")
        let started = Date()
        let tmp = try TemporaryDirectory(prefix: "sotto-receipt-power")
        let power = try PowerCutFileSystem.mount(in: tmp.path)
        defer { power.abandon() }
        let alice = try Device.start("alice", in: tmp.path)
        defer { alice.stop() }
        let bob = try Device.start("bob", in: tmp.path, groupIn: power.mountpoint)
        defer { bob.stop() }
        try power.syncEverything()  // the device was set up long ago
        for planned in rounds {
            try round(alice: alice, bob: bob, point: planned.step, cut: planned.cut, power: power, report: &report)
        }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    private func round(alice: Device, bob: Device, point: String, cut: PowerCutFileSystem.Cut, power: PowerCutFileSystem,
                       report: inout Report) throws {
        report.rounds += 1
        let label = "receipt@\(point) (cut \(cut))"
        let trip = try DaemonCrash.conversation(creator: alice, joiner: bob)
        let count = { (device: Device, table: String) throws -> Int64 in try device.query("SELECT count(*) FROM \(table)")[0].int64(0) }
        try bob.waitUntil("\(label): bob owes nothing from the join") {
            try count(bob, "receipt_due") == 0 && count(bob, "outliving_notice") == 0
        }
        bob.stopDaemon()
        try bob.startDaemon(environment: [CrashPoint.variable: point])

        let text = "receipt-" + Hex.encode(SecureRandom.bytes(6))
        guard let sent = try alice.json(["send", trip, text])["messageId"] as? String else {
            throw StressFailure("\(label): send returned no messageId")
        }
        guard try bob.diedAtCrashPoint(label, timeoutMs: 20_000) else {
            report.notReached.append(label)
            return
        }
        report.kills += 1
        let summary = try power.powerCycle(cut) { bob.stopPushSocket() }
        report.powerCuts.append("\(label): \(summary)")
        try bob.startPushSocket()

        // Alice's side was never cut: what her workers applied is exact. Her daemon records
        // the push itself; the rest of the message's status changes are receipts applied.
        guard let aliceDaemon = alice.daemonPID else { throw StressFailure("\(label): alice's daemon is not running") }
        let applied = {
            try alice.query("""
                SELECT count(*) FROM change_log WHERE kind = ? AND entityId = ? AND writerPid <> ?
                """, [.text(ChangeKind.messageStatusChanged.rawValue), .text(sent), .integer(Int64(aliceDaemon))])[0].int64(0)
        }
        let state = { try alice.query("SELECT state FROM outbox WHERE messageId = ?", [.text(sent)]).map { try $0.string(0) } }
        let appliedBefore = try applied()
        let owedBefore = try bob.query("SELECT messageId FROM receipt_due").map { try $0.string(0) }
        let noticesBefore = try count(bob, "outliving_notice")
        let sealed = point == "receipts.sealed"
        // Sealed, not queued: the debt is on bob's disk, nothing reached alice. Delivered, notice
        // not deleted: the debt was paid in the notice's own commit, the notice still queued.
        let expectedBefore = sealed ? (owed: [sent], notices: Int64(0), applied: Int64(0)) : (owed: [], notices: 1, applied: 1)
        if owedBefore != expectedBefore.owed || noticesBefore != expectedBefore.notices || appliedBefore != expectedBefore.applied {
            report.findings.append("\(label): after the cut bob owes \(owedBefore), queues \(noticesBefore) notice(s); "
                                   + "alice applied \(appliedBefore) receipt(s)")
        }

        try bob.startDaemon()
        let delivered = (try? alice.waitUntil("\(label): alice's push delivered", timeoutMs: 20_000) { try state() == ["delivered"] }) != nil
        let settled = (try? bob.waitUntil("\(label): bob owes nothing and queues nothing", timeoutMs: 20_000) {
            try count(bob, "receipt_due") == 0 && count(bob, "outliving_notice") == 0
        }) != nil
        // Bob queues nothing more: every receipt he will ever send for it has been applied.
        let appliedAfter = try applied()
        let allowed: ClosedRange<Int64> = sealed ? 1...1 : 1...2
        if !delivered || !settled || !allowed.contains(appliedAfter) {
            let states = try state()
            report.findings.append("\(label): alice's push \(states), bob settled: \(settled), "
                                   + "alice applied \(appliedAfter) receipt(s) (allowed \(allowed))")
        }
        let onBob = try bob.storedTexts(conversation: trip).filter { $0.text == text }.count
        if onBob != 1 { report.findings.append("\(label): bob holds the text \(onBob) times") }
    }
}

