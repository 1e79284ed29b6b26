import Foundation
import SottoCrypto
import SottoWire
import TestSupport

/// Issue #21: the Nth write (or fsync) on alice's disk fails with EIO or ENOSPC while she runs
/// `sotto send` to a conversation with bob, for N = 1, 2, … until a send no longer reaches its
/// Nth. A faulted send exits non-zero with a clear error and stores nothing (the message and
/// its outbox rows are one transaction); the file stays sound, the daemon answers, a send with
/// the fault gone succeeds, and bob gets every sent text once and never a failed one. A send
/// that exits 0 while the armed fault was met later (the outbox's bookkeeping, say) must still
/// be what it said: stored once with its pushes and delivered once.
///
/// ```swift
/// let report = try SendFaults(fault: .write, error: "ENOSPC").run()
/// #expect(report.faultedSteps > 0 && report.stepsBeyondSend && report.findings.isEmpty)
/// ```
struct SendFaults {
    let fault: PowerCutFileSystem.Fault
    let error: String
    var maxSteps = 80

    struct Report {
        var label = ""
        /// Sends that failed because of the armed fault.
        var faultedSteps = 0
        /// Sends that exited 0 while the armed fault was met by the time the device went quiet:
        /// it hit a write beside the send's (the delivery's bookkeeping, the member's receipt).
        var okAfterFault: [Int] = []
        /// A send exited 0 before the file system saw the Nth (write or fsync): the loop
        /// passed the send's own.
        var stepsBeyondSend = false
        var sentTexts = 0
        var errors: Set<String> = []
        var findings: [String] = []
        var seconds = 0.0

        var summaryLine: String {
            "POWER send faults \(label): faulted steps=\(faultedSteps) ok after the fault=\(okAfterFault) passed the send=\(stepsBeyondSend) "
                + "sent=\(sentTexts) findings=\(findings.count) seconds=\(String(format: "%.1f", seconds)) errors=\(errors.sorted())"
        }
    }

    func run() throws -> Report {
        var report = Report(label: "\(fault) \(error)")
        let started = Date()
        let tmp = try TemporaryDirectory(prefix: "sotto-sendfaults")
        let disk = try PowerCutFileSystem.mount(in: tmp.path)
        defer { disk.abandon() }
        let alice = try Device.start("alice", in: tmp.path, groupIn: disk.mountpoint)
        defer { alice.stop() }
        let bob = try Device.start("bob", in: tmp.path)
        defer { bob.stop() }
        let trip = try DaemonCrash.conversation(creator: alice, joiner: bob)
        let checks = FaultChecks(device: alice, error: error)
        try checks.waitQuiet("the conversation's set-up")
        try disk.syncEverything()
        let marker = "fault-" + Hex.encode(SecureRandom.bytes(4))
        var sent: [String] = [], failed: [String] = []

        for step in 1...maxSteps {
            let label = "step \(step)"
            let text = "\(marker)-\(step)"
            try disk.fail(fault, first: step, error: error)
            let result = try alice.cli(["send", trip, text])
            let met = try disk.seen(fault) >= step
            if result.status == 0 {
                sent.append(text)
                // A send that did N writes itself has seen N when it exits: it did fewer.
                if !met { report.stepsBeyondSend = true }
                // Left armed: a fault still ahead may hit the delivery's bookkeeping.
                try checks.waitQuiet(label)
                if try disk.seen(fault) >= step { report.okAfterFault.append(step) }
                try disk.clearFaults()
                let stored = try checks.storedWithPushes(text, in: trip)
                if stored != 1 { report.findings.append("\(label): exited 0, stored \(stored) times with its pushes") }
            } else {
                failed.append(text)
                try disk.clearFaults()
                if met { report.faultedSteps += 1 } else { report.findings.append("\(label): failed without meeting the fault: \(result.stderr)") }
                if let unclear = checks.unclear(result.stderr) { report.findings.append("\(label): \(unclear)") }
                report.errors.insert(String(result.stderr.prefix(140)))
                if try checks.storedAnyhow(text, in: trip) { report.findings.append("\(label): failed, yet stored") }
            }
            report.findings += try checks.afterFault(label, conversation: trip)
            // The fault is gone: a send goes through.
            let again = text + "-again"
            let retried = try alice.cli(["send", trip, again])
            if retried.status == 0 { sent.append(again) } else { report.findings.append("\(label): send after the fault: \(retried.stderr)") }
            try checks.waitQuiet("\(label) again")
            if report.stepsBeyondSend { break }
        }

        // Bob holds every sent text once, and no failed one.
        report.sentTexts = sent.count
        let bobTexts = { try bob.storedTexts(conversation: trip).map(\.text).filter { $0.hasPrefix(marker) } }
        _ = try? bob.waitUntil("bob has every sent text", timeoutMs: 30_000) { try Set(bobTexts()).isSuperset(of: sent) }
        let received = try bobTexts()
        for text in sent where received.filter({ $0 == text }).count != 1 {
            report.findings.append("bob holds \(text) \(received.filter { $0 == text }.count) times")
        }
        for text in failed where received.contains(text) { report.findings.append("bob received the failed \(text)") }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }
}
