import Foundation
import SharedStore
import SottoWire
import TestSupport

/// Issue #21: push storms through real workers (Accept=yes, one per push) whose group
/// directory lies on the power-cut file system. In each round, after a random number of ok
/// acks the power goes (every later change fails with EIO, and what was not fsynced is
/// forgotten at unmount, in the round's way: all, a random half, or the last write torn); the
/// senders keep going, as a relay would, until every push was tried once. Then the disk is
/// mounted again with what it kept, checked, and the round's pushes are all sent again (the
/// relay's redelivery) and must all be stored once.
///
/// ```swift
/// let report = try PowerCutStorm(rounds: 3, pushesPerRound: 160).run()
/// print(report.summaryLine)   // STRESS power-cut: cuts=3 ackedLost=0 duplicates=0 …
/// ```
struct PowerCutStorm {
    var rounds: Int
    var pushesPerRound: Int
    var senders = 4
    /// One fsync removed from the workers (debug builds): the mutation test of a durability rule.
    var mutation: SyncMutation? = nil

    /// The way round `round` cuts: all, subset, torn in turn, seeded by the round.
    static func cut(forRound round: Int) -> PowerCutFileSystem.Cut {
        switch round % 3 {
        case 0: .all
        case 1: .subset(seed: UInt32(round), keepPercent: 50)
        default: .torn(seed: UInt32(round))
        }
    }

    struct Report {
        var cuts = 0
        /// Rounds whose cut was `torn` (the last write kept up to a 512-byte boundary).
        var tornCuts = 0
        /// Writes a torn cut really cut short (a torn cut whose last write was sector-aligned tears nothing).
        var tornWrites = 0
        /// Torn rounds that lost an acked push, stored one twice, or left the file unsound: must be 0.
        var tornDamaged: [String] = []
        var okBeforeCut = 0
        var okAfterArming = 0
        /// Pushes that met the dead disk: every one must have been answered with a retryable error.
        var refusedAfterArming = 0
        var notRetryable: [String] = []
        var transportFailures: [String] = []
        var writesForgotten = 0
        /// Acked ok before the remount, yet not in the database the disk kept.
        var ackedLost: [String] = []
        /// Any id stored more than once, after a cut or after redelivery.
        var duplicates: [String] = []
        var storedNotSent = 0
        var integrityFailures: [String] = []
        var redeliveryErrors: [String] = []
        var storedAfterRedelivery = 0
        var seconds = 0.0

        var summaryLine: String {
            "STRESS power-cut: cuts=\(cuts) ackedLost=\(ackedLost.count) duplicates=\(duplicates.count) torn=\(tornDamaged.count) "
                + "tornCuts=\(tornCuts) tornWrites=\(tornWrites) "
                + "integrityFailures=\(integrityFailures.count) okBefore=\(okBeforeCut) okAfterArming=\(okAfterArming) "
                + "refusedAfterArming=\(refusedAfterArming) writesForgotten=\(writesForgotten) "
                + "redeliveryErrors=\(redeliveryErrors.count) seconds=\(String(format: "%.1f", seconds))"
        }
    }

    func run() throws -> Report {
        var report = Report()
        let started = Date()
        let tmp = try TemporaryDirectory(prefix: "sotto-powercut")
        var disk = try PowerCutFileSystem.mount(in: tmp.path)
        defer { disk.abandon() }
        let fixture = try StormFixture(groupPath: disk.mountpoint + "/group")
        try disk.syncEverything()  // the device was set up long ago
        // The shipped (release) worker under `make stress`; a mutation needs the debug one.
        let notify = mutation == nil ? try StressProfile.current.executable("sotto-notify") : try builtExecutable("sotto-notify")
        let socket = fixture.tmp.path + "/push.sock"
        var generator = SystemRandomNumberGenerator()
        var everSent: Set<String> = []

        for round in 0..<rounds {
            let cut = Self.cut(forRound: round)
            let pushes = fixture.sealPushes(count: pushesPerRound)
            everSent.formUnion(pushes.map(\.messageId))
            let cutAfter = Int.random(in: 1...max(1, pushesPerRound / 2), using: &generator)
            let environment = fixture.environment.merging(mutation.map { [SyncMutation.variable: $0.rawValue] } ?? [:]) { $1 }
            let storm = try storm(pushes, cutAfter: cutAfter, cut: cut, disk: disk, socket: socket, notify: notify,
                                  environment: environment)
            report.cuts += 1
            report.okBeforeCut += storm.okBeforeCut
            report.okAfterArming += storm.okAfterArming
            report.refusedAfterArming += storm.refused
            report.notRetryable += storm.notRetryable
            report.transportFailures += storm.transport
            let summary = try disk.unmount()
            report.writesForgotten += Self.count("dropped", in: summary)
            let tornWrites = Self.count("torn", in: summary)
            report.tornWrites += tornWrites

            // What the disk kept.
            disk = try PowerCutFileSystem.mount(in: tmp.path)
            let kept = try storedCounts(fixture)
            if kept.integrity != "ok" { report.integrityFailures.append("round \(round) (\(cut)): \(kept.integrity.prefix(100))") }
            let lost = storm.acked.filter { kept.counts[$0] == nil }.sorted()
            let twice = kept.counts.filter { $0.value > 1 }.map(\.key)
            report.ackedLost += lost
            report.duplicates += twice
            if case .torn = cut {
                report.tornCuts += 1
                if kept.integrity != "ok" || !lost.isEmpty || !twice.isEmpty {
                    report.tornDamaged.append("round \(round) (\(tornWrites) write(s) torn): integrity \(kept.integrity.prefix(60)), "
                                              + "\(lost.count) acked lost, \(twice.count) twice")
                }
            }
            report.storedNotSent = kept.counts.keys.filter { !everSent.contains($0) }.count

            // The relay redelivers the round's pushes: each stored exactly once, acked ok.
            let again = try PushSocketServer.start(socketPath: socket, accept: true, command: [notify],
                                                   environment: fixture.environment)
            for push in pushes {
                let line = (try? PushClient.send(push.payload, to: socket)) ?? "transport failure"
                guard case .ok(let id, _)? = PushAck.parse(Array(line.utf8)), id == push.messageId else {
                    report.redeliveryErrors.append("round \(round): \(line.prefix(100))")
                    continue
                }
            }
            again.stop()
            let redelivered = try storedCounts(fixture)
            if redelivered.integrity != "ok" { report.integrityFailures.append("round \(round) after redelivery") }
            report.duplicates += redelivered.counts.filter { $0.value > 1 }.map(\.key)
            report.storedAfterRedelivery = redelivered.counts.count
        }
        try disk.unmount()
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    // MARK: - One storm

    private struct Storm {
        var armed = false
        var acked: Set<String> = []
        var okBeforeCut = 0
        var okAfterArming = 0
        var refused = 0
        var notRetryable: [String] = []
        var transport: [String] = []
    }

    /// Sends `pushes` from `senders` threads; arms `cut` once `cutAfter` were acked ok.
    private func storm(_ pushes: [SealedPush], cutAfter: Int, cut: PowerCutFileSystem.Cut, disk: PowerCutFileSystem,
                       socket: String, notify: String, environment: [String: String]) throws -> Storm {
        let server = try PushSocketServer.start(socketPath: socket, accept: true, command: [notify], environment: environment)
        let state = Locked(Storm())
        DispatchQueue.concurrentPerform(iterations: senders) { sender in
            for index in stride(from: sender, to: pushes.count, by: senders) {
                let push = pushes[index]
                let armedBefore = state.value.armed
                let ack: PushAck?
                do {
                    ack = PushAck.parse(Array(try PushClient.send(push.payload, to: socket).utf8))
                } catch {
                    state.update { $0.transport.append("\(error)") }
                    continue
                }
                let arm = state.update { storm -> Bool in
                    switch ack {
                    case .ok(let id, _)?:
                        storm.acked.insert(id)
                        if armedBefore { storm.okAfterArming += 1 } else { storm.okBeforeCut += 1 }
                    case .error(let error)?:
                        storm.refused += 1
                        if !error.code.retry { storm.notRetryable.append(error.code.rawValue) }
                    case nil:
                        storm.transport.append("unparseable ack")
                    }
                    guard !storm.armed, storm.acked.count >= cutAfter else { return false }
                    storm.armed = true
                    return true
                }
                if arm {
                    do { try disk.arm(cut) } catch { state.update { $0.transport.append("arm: \(error)") } }
                }
            }
        }
        server.stop()
        return state.value
    }

    // MARK: - Checks

    /// "writes kept=K dropped=D torn=T; …" → D for "dropped", T for "torn".
    static func count(_ field: String, in summary: String) -> Int {
        guard let range = summary.range(of: " \(field)=") else { return 0 }
        return Int(summary[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }

    /// Rows per message id of the storm's conversation, and `PRAGMA integrity_check`.
    private func storedCounts(_ fixture: StormFixture) throws -> (counts: [String: Int], integrity: String) {
        let conn = try SQLiteConnection.open(path: fixture.group.databasePath, profile: .worker)
        let integrity = try conn.query("PRAGMA integrity_check").map { try $0.string(0) }.joined(separator: "; ")
        var counts: [String: Int] = [:]
        for row in try conn.query("SELECT id, COUNT(*) FROM message WHERE conversationId = ? GROUP BY id",
                                  [.text(fixture.conversationId)]) {
            counts[try row.string(0)] = Int(try row.int64(1))
        }
        return (counts, integrity)
    }
}
