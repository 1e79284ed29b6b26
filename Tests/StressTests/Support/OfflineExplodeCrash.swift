import Foundation
import SottoCrypto
import SottoWire
import TestSupport

/// Issue #22 §1 under crashes (docs/adr/0034, ADR 0017): bob is offline on his direct `unix:`
/// endpoint; alice's daemon SIGKILLs itself at one named step of the explode (or, for
/// `notice.delivered`, right after bob's device acked the notice, before alice deleted it),
/// then restarts. The explode's push must be in exactly one place after the kill (the outbox
/// while the conversation's rows exist, the notice queue once they are gone: never neither,
/// never both), alice must end with nothing of the conversation and, once bob is back and
/// told, no notice either; bob must delete the conversation.
///
/// ```swift
/// let report = try OfflineExplodeCrash().run()
/// print(report.summaryLine)   // STRESS offline-explode-crash: rounds=7 … findings=0
/// ```
struct OfflineExplodeCrash {
    /// The named steps an explode passes after its commit, and the notice's own step.
    static let points = ["explode.committed", "outbox.delivered", "explode.delivered", "explode.rowsCommitted",
                         "keystore.identityWiped", "explode.keysWiped", "notice.delivered"]

    /// Issue #21: alice's group directory lies on the power-cut file system (docs/adr/0037),
    /// and each death is also a power cut of this kind.
    var powerCut: PowerCutFileSystem.Cut? = nil

    typealias Report = CrashRoundsReport

    func run() throws -> Report {
        var report = Report(name: "offline-explode-crash")
        let started = Date()
        let tmp = try TemporaryDirectory(prefix: "sotto-notice")
        // A short delivery wait: the explode gives up on bob after 1 s and deletes.
        let environment = ["SOTTO_EXPLODE_DELIVERY_MS": "1000"]
        let power = try powerCut.map { _ in try PowerCutFileSystem.mount(in: tmp.path) }
        defer { power?.abandon() }
        let alice = try Device.start("alice", in: tmp.path, environment: environment, groupIn: power?.mountpoint)
        defer { alice.stop() }
        try power?.syncEverything()  // the device was set up long ago
        let bob = try Device.start("bob", in: tmp.path, environment: environment)
        defer { bob.stop() }
        for point in Self.points {
            try round(alice: alice, bob: bob, point: point, power: power, report: &report)
        }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    private func round(alice: Device, bob: Device, point: String, power: PowerCutFileSystem?,
                       report: inout Report) throws {
        report.rounds += 1
        let label = "offline-explode@\(point)"
        let trip = try DaemonCrash.conversation(creator: alice, joiner: bob)
        let text = "notice-plaintext-" + Hex.encode(SecureRandom.bytes(6))
        _ = try alice.json(["send", trip, text])
        try bob.waitUntil("\(label): bob has the text") {
            try bob.storedTexts().filter { $0.text == text }.count == 1
        }
        let onAlice = try alice.conversationIds(trip)
        let onBob = try bob.conversationIds(trip)
        bob.stopPushSocket()
        bob.stopDaemon()

        alice.stopDaemon()
        if point == "notice.delivered" {
            try alice.startDaemon()
            _ = try alice.cli(["explode", trip])
            try alice.waitUntil("\(label): the notice waits") { try alice.outlivingNotices() == [1, 1] }
            alice.stopDaemon()
            try alice.startDaemon(environment: [CrashPoint.variable: point])
            try bob.startDaemon()
            try bob.startPushSocket()
        } else {
            try alice.startDaemon(environment: [CrashPoint.variable: point])
            _ = try alice.cli(["explode", trip])
        }
        guard try waitForDeath(alice, label, &report) else { return }
        report.kills += 1
        if let power, let powerCut {
            report.powerCuts.append(try power.powerCycle(powerCut) {
                alice.stopPushSocket()
                alice.stopDaemon(signal: SIGKILL)
            })
            try alice.startPushSocket()
        }

        // Exactly one copy of the explode push: in the outbox or in the notice queue.
        let inOutbox = try alice.query("SELECT count(*) FROM outbox WHERE state = 'pending'")[0].int64(0)
        let notices = try alice.query("SELECT count(*) FROM outliving_notice")[0].int64(0)
        if inOutbox + notices != 1 {
            report.findings.append("\(label): after the kill outbox=\(inOutbox) notices=\(notices), expected one of them")
        }
        try alice.startDaemon()
        let aliceDone = (try? alice.waitUntil("\(label): alice deleted it", timeoutMs: 30_000) {
            try alice.leftovers(of: onAlice).isEmpty
        }) != nil
        if !aliceDone { report.findings.append("\(label): alice keeps \(try alice.leftovers(of: onAlice))") }
        if point != "notice.delivered" {
            let waiting = try alice.outlivingNotices()
            if waiting != [1, 1] { report.findings.append("\(label): alice's notices \(waiting) while bob is away, expected [1, 1]") }
            try bob.startDaemon()
            try bob.startPushSocket()
        }
        let bobDone = (try? bob.waitUntil("\(label): bob deleted it", timeoutMs: 90_000) {
            try bob.leftovers(of: onBob).isEmpty
        }) != nil
        if !bobDone { report.findings.append("\(label): bob keeps \(try bob.leftovers(of: onBob))") }
        let drained = (try? alice.waitUntil("\(label): alice's notice is gone", timeoutMs: 30_000) {
            try alice.outlivingNotices() == [0, 0]
        }) != nil
        if !drained { report.findings.append("\(label): alice still has notices \(try alice.outlivingNotices())") }
        for device in [alice, bob] where try device.groupFilesContain(Array(text.utf8)) {
            report.findings.append("\(label): \(device.name)'s files still hold the text")
        }
    }

    /// Waits until the armed daemon killed itself; a daemon that did not is restarted plainly.
    private func waitForDeath(_ alice: Device, _ label: String, _ report: inout Report) throws -> Bool {
        guard try alice.diedAtCrashPoint(label, timeoutMs: 60_000) else {
            report.notReached.append(label)
            return false
        }
        return true
    }
}
