import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport

/// Issue #7 part 2b: alice's daemon SIGKILLed (and restarted) while a burst of sends (`sendMessage`)
/// to bob runs through its control socket. Afterwards every message the daemon reported as
/// sent exists once on alice, and the outbox delivers each of alice's texts to bob exactly once.
///
/// ```swift
/// let report = try DaemonCrash(profile: .short).run()
/// print(report.summaryLine)   // STRESS crash-daemon: kills=1 sends=40 reported=… 
/// ```
struct DaemonCrash {
    let profile: StressProfile
    static let sendsPerKill = 16
    /// Issue #21: alice's group directory lies on the power-cut file system (docs/adr/0037),
    /// and each kill is also a power cut of this kind.
    var powerCut: PowerCutFileSystem.Cut? = nil

    struct Report: Sendable {
        var kills = 0
        var sends = 0
        var reported = 0
        var refused = 0
        var reportedMissing = 0
        var reportedTwice = 0
        var senderTexts = 0
        var receiverTexts = 0
        var receiverMissing = 0
        var receiverExtra = 0
        var receiverDuplicateTexts = 0
        var outboxNotSent = 0
        var integritySender = ""
        var integrityReceiver = ""
        var deliveredInTime = false
        var powerCuts: [String] = []
        var seconds = 0.0

        var summaryLine: String {
            "STRESS crash-daemon: kills=\(kills) sends=\(sends) reported=\(reported) refused=\(refused) "
                + "reportedMissing=\(reportedMissing) reportedTwice=\(reportedTwice) senderTexts=\(senderTexts) "
                + "receiverTexts=\(receiverTexts) receiverMissing=\(receiverMissing) receiverExtra=\(receiverExtra) "
                + "receiverDuplicates=\(receiverDuplicateTexts) outboxNotSent=\(outboxNotSent) delivered=\(deliveredInTime) "
                + "integrity=\(integritySender)/\(integrityReceiver) seconds=\(String(format: "%.1f", seconds))"
        }
    }

    func run() throws -> Report {
        var report = Report()
        let tmp = try TemporaryDirectory(prefix: "sotto-dcrash")
        let power = try powerCut.map { _ in try PowerCutFileSystem.mount(in: tmp.path) }
        defer { power?.abandon() }
        let alice = try Device.start("alice", in: tmp.path, groupIn: power?.mountpoint)
        defer { alice.stop() }
        try power?.syncEverything()  // the device was set up long ago
        let bob = try Device.start("bob", in: tmp.path)
        defer { bob.stop() }
        let trip = try Self.conversation(creator: alice, joiner: bob)
        let started = Date()
        let marker = "crash-" + Hex.encode(SecureRandom.bytes(6))

        for round in 0..<profile.daemonKills {
            // The burst runs on its own thread; the kill lands while it is mid-flight.
            let sentSoFar = Locked(0)
            let outcomes = Locked((ids: [String](), refused: 0))
            let done = DispatchSemaphore(value: 0)
            // The control socket's sendMessage, what `sotto send` calls: no CLI is spawned
            // while this thread restarts processes (a process spawned then inherited a CLI's
            // pipe and the test waited forever on the exited CLI's output).
            let controlSocket = alice.runtime.controlSocketPath
            let burst = Thread {
                for index in 0..<Self.sendsPerKill {
                    let text = "\(marker)-\(round)-\(index)"
                    // While the daemon is down its socket refuses: the sender tries again until
                    // it is back (a user retrying); an answer, ok or not, ends this turn.
                    var client: ControlSocketClient?
                    let giveUpAt = Date().addingTimeInterval(60)
                    while client == nil, Date() < giveUpAt {
                        client = try? ControlSocketClient(path: controlSocket, timeoutSeconds: 20)
                        if client == nil { usleep(20_000) }  // polling for the daemon's return, like waitUntil
                    }
                    if let sent = try? client?.result("sendMessage", ["conversation": trip, "text": text]),
                       let id = sent["messageId"] as? String {
                        outcomes.update { $0.ids.append(id) }
                    } else {
                        outcomes.update { $0.refused += 1 }
                    }
                    sentSoFar.update { $0 += 1 }
                }
                done.signal()
            }
            burst.start()
            try alice.waitUntil("the burst is under way") { sentSoFar.value >= 3 }
            if let power, let powerCut {
                report.powerCuts.append(try power.powerCycle(powerCut) {
                    alice.stopPushSocket()
                    alice.stopDaemon(signal: SIGKILL)
                })
                try alice.startPushSocket()
            } else {
                alice.stopDaemon(signal: SIGKILL)
            }
            report.kills += 1
            try alice.startDaemon()
            done.wait()
            let result = outcomes.value
            report.sends += Self.sendsPerKill
            report.reported += result.ids.count
            report.refused += result.refused

            // Every reported id exists exactly once on alice.
            for id in result.ids {
                let count = try alice.query("SELECT count(*) FROM message WHERE id = ?", [.text(id)])[0].int64(0)
                if count == 0 { report.reportedMissing += 1 }
                if count > 1 { report.reportedTwice += 1 }
            }
        }

        // The outbox delivers every queued text to bob, once.
        let marked = { (device: Device) throws -> [(id: String, contentType: String, text: String)] in
            try device.storedTexts(conversation: trip).filter { $0.contentType == ContentType.text && $0.text.hasPrefix(marker + "-") }
        }
        let senderIds = Set(try marked(alice).map(\.id))
        report.senderTexts = senderIds.count
        report.deliveredInTime = (try? bob.waitUntil("bob has every text of alice", timeoutMs: 60_000) {
            try marked(bob).count >= senderIds.count
        }) != nil
        _ = try? alice.waitUntil("alice's outbox drained", timeoutMs: 10_000) {
            try alice.query("SELECT count(*) FROM outbox WHERE state NOT IN ('sent', 'delivered')")[0].int64(0) == 0
        }
        let receiverIds = try marked(bob).map(\.id)
        report.receiverTexts = receiverIds.count
        report.receiverMissing = senderIds.subtracting(receiverIds).count
        report.receiverExtra = Set(receiverIds).subtracting(senderIds).count
        let receiverContents = try marked(bob).map(\.text)
        report.receiverDuplicateTexts = receiverContents.count - Set(receiverContents).count
        report.outboxNotSent = Int(try alice.query("SELECT count(*) FROM outbox WHERE state NOT IN ('sent', 'delivered')")[0].int64(0))
        report.integritySender = try alice.query("PRAGMA integrity_check").map { try $0.string(0) }.joined(separator: "; ")
        report.integrityReceiver = try bob.query("PRAGMA integrity_check").map { try $0.string(0) }.joined(separator: "; ")
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    /// `creator` makes a conversation, invites `joiner`, who joins; both see it active.
    static func conversation(creator: Device, joiner: Device) throws -> String {
        guard let id = try creator.json(["new", "--name", "Crash"])["conversationId"] as? String,
              let code = try creator.json(["invite", id, "--expires", "1h"])["code"] as? String else {
            throw StressFailure("new/invite returned no id or code")
        }
        let joined = try joiner.json(["join", code, "--profile-name", joiner.name])
        guard joined["conversationId"] as? String == id else { throw StressFailure("join returned \(joined)") }
        try joiner.waitUntil("\(joiner.name) active") { try joiner.conversation(id)?["state"] as? String == "active" }
        try creator.waitUntil("\(creator.name) lists 2 members") { try creator.conversation(id)?["members"] as? Int == 2 }
        return id
    }
}
