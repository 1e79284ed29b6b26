import Foundation
import SharedStore
import TestSupport

/// Issue #21: a push storm through real workers (Accept=yes, one per push) whose group
/// directory lies on the power-cut file system. After `cutAfterAcks` ok acks the power goes
/// (every later change fails with EIO, and what was not fsynced is forgotten at unmount);
/// the senders keep going, as a relay would, until every push was tried once. Then the disk is
/// mounted again with what it kept, and every push is sent again (the relay's redelivery).
///
/// ```swift
/// let report = try PowerCutStorm(cut: .all, cutAfterAcks: 60).run()
/// #expect(report.ackedButMissing.isEmpty)
/// ```
struct PowerCutStorm {
    let cut: PowerCutFileSystem.Cut
    var pushes = 160
    var senders = 4
    let cutAfterAcks: Int

    struct Report {
        var okBeforeCut = 0
        var okAfterArming = 0
        var errorsAfterArming: [String: Int] = [:]
        var transportFailures: [String] = []
        var pendingAtCut = (files: 0, writes: 0, bytes: 0, directories: 0)
        var cutSummary = ""
        var integrityAfterCut = ""
        /// Acked ok before the remount, yet not in the database the disk kept.
        var ackedButMissing: [String] = []
        /// Any id stored more than once, after the cut or after redelivery.
        var duplicates: [String] = []
        var storedAfterCut = 0
        var storedNotSent = 0
        var redeliveredOk = 0
        var redeliveryErrors: [String] = []
        var storedAfterRedelivery = 0
        var integrityAfterRedelivery = ""

        var summaryLine: String {
            "power cut \(cutSummary) | ok before \(okBeforeCut), after arming \(okAfterArming), "
                + "errors after arming \(errorsAfterArming) | unsynced at the cut: \(pendingAtCut.writes) writes "
                + "(\(pendingAtCut.bytes) B) in \(pendingAtCut.files) files, \(pendingAtCut.directories) dirs | "
                + "stored \(storedAfterCut), after redelivery \(storedAfterRedelivery)"
        }
    }

    func run() throws -> Report {
        var report = Report()
        let tmp = try TemporaryDirectory(prefix: "sotto-powercut")
        var disk = try PowerCutFileSystem.mount(in: tmp.path)
        defer { disk.abandon() }
        let fixture = try StormFixture(groupPath: disk.mountpoint + "/group")
        try disk.syncEverything()  // the device was set up long ago
        let all = fixture.sealPushes(count: pushes)
        let notify = try builtExecutable("sotto-notify")
        let socket = fixture.tmp.path + "/push.sock"

        // The storm, and the power going after `cutAfterAcks` ok acks.
        let server = try PushSocketServer.start(socketPath: socket, accept: true, command: [notify],
                                                environment: fixture.environment)
        let state = Locked(StormState())
        let poweredDisk = disk
        DispatchQueue.concurrentPerform(iterations: senders) { sender in
            for index in stride(from: sender, to: all.count, by: senders) {
                let push = all[index]
                let armedBefore = state.value.armed
                let ack: PushAck?
                do {
                    ack = PushAck.parse(Array(try PushClient.send(push.payload, to: socket).utf8))
                } catch {
                    state.update { $0.transport.append("\(error)") }
                    continue
                }
                state.update { storm in
                    switch ack {
                    case .ok(let id, _)?:
                        storm.acked.insert(id)
                        if armedBefore { storm.okAfterArming += 1 } else { storm.okBeforeCut += 1 }
                    case .error(let error)?:
                        storm.errors[error.code.rawValue, default: 0] += 1
                    case nil:
                        storm.transport.append("unparseable ack")
                    }
                }
                let arm = state.update { storm -> Bool in
                    guard !storm.armed, storm.acked.count >= cutAfterAcks else { return false }
                    storm.armed = true
                    return true
                }
                if arm {
                    let pending = (try? poweredDisk.pending()) ?? (-1, -1, -1, -1)
                    do { try poweredDisk.arm(cut) } catch { state.update { $0.transport.append("arm: \(error)") } }
                    state.update { $0.pendingAtCut = pending }
                }
            }
        }
        server.stop()
        let storm = state.value
        report.okBeforeCut = storm.okBeforeCut
        report.okAfterArming = storm.okAfterArming
        report.errorsAfterArming = storm.errors
        report.transportFailures = storm.transport
        report.pendingAtCut = storm.pendingAtCut
        report.cutSummary = try disk.unmount()

        // What the disk kept.
        disk = try PowerCutFileSystem.mount(in: tmp.path)
        let afterCut = try storedCounts(fixture)
        report.integrityAfterCut = afterCut.integrity
        report.storedAfterCut = afterCut.counts.count
        report.ackedButMissing = storm.acked.filter { afterCut.counts[$0] == nil }.sorted()
        report.duplicates = afterCut.counts.filter { $0.value > 1 }.map(\.key)
        let sent = Set(all.map(\.messageId))
        report.storedNotSent = afterCut.counts.keys.filter { !sent.contains($0) }.count

        // The relay redelivers everything: each push stored exactly once, acked ok.
        let again = try PushSocketServer.start(socketPath: socket, accept: true, command: [notify],
                                               environment: fixture.environment)
        for push in all {
            let line = (try? PushClient.send(push.payload, to: socket)) ?? "transport failure"
            if case .ok(let id, _)? = PushAck.parse(Array(line.utf8)), id == push.messageId {
                report.redeliveredOk += 1
            } else {
                report.redeliveryErrors.append(String(line.prefix(120)))
            }
        }
        again.stop()
        let afterRedelivery = try storedCounts(fixture)
        report.integrityAfterRedelivery = afterRedelivery.integrity
        report.storedAfterRedelivery = afterRedelivery.counts.count
        report.duplicates += afterRedelivery.counts.filter { $0.value > 1 }.map(\.key)
        try disk.unmount()
        return report
    }

    private struct StormState {
        var armed = false
        var acked: Set<String> = []
        var okBeforeCut = 0
        var okAfterArming = 0
        var errors: [String: Int] = [:]
        var transport: [String] = []
        var pendingAtCut = (files: 0, writes: 0, bytes: 0, directories: 0)
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
