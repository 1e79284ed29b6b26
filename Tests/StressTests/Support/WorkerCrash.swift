import Foundation
import SharedStore
import SottoWire
import TestSupport

/// Issue #7 part 2a: real `sotto-notify --payload -` workers, each with its own valid push,
/// SIGKILLed after a random 0–5 ms (some before they open the database, some inside the
/// transaction, some after the commit). Afterwards the file must be sound, hold no partial
/// message, keep every acked push, and take every push again exactly once.
///
/// ```swift
/// let report = try WorkerCrash(profile: .short).run()
/// print(report.summaryLine)   // STRESS crash-workers: workers=300 killed=200 …
/// ```
struct WorkerCrash {
    let profile: StressProfile
    static let threads = 4

    struct Report: Sendable {
        var workers = 0
        var killed = 0
        var killedBeforeExit = 0
        var acked = 0
        var ackedLost = 0
        /// Killed workers whose message was committed (the kill came after the transaction)…
        var killedCommitted = 0
        /// …and of those, the ones killed before their ack went out.
        var committedUnacked = 0
        var storedAfterCrash = 0
        var changesAfterCrash = 0
        var unreadAfterCrash = 0
        var integrityAfterCrash = ""
        var resent = 0
        var resentStored = 0
        var resentDuplicate = 0
        var resentFailures: [String] = []
        var finalStored = 0
        var finalDistinct = 0
        var finalChanges = 0
        var finalUnread = 0
        var integrity = ""
        var harnessFailures: [String] = []
        var seconds = 0.0

        var summaryLine: String {
            "STRESS crash-workers: workers=\(workers) killed=\(killed) killedRunning=\(killedBeforeExit) acked=\(acked) "
                + "ackedLost=\(ackedLost) killedCommitted=\(killedCommitted) committedUnacked=\(committedUnacked) storedAfterCrash=\(storedAfterCrash) changesAfterCrash=\(changesAfterCrash) "
                + "unreadAfterCrash=\(unreadAfterCrash) integrityAfterCrash=\(integrityAfterCrash) resent=\(resent) "
                + "resentStored=\(resentStored) resentDuplicate=\(resentDuplicate) resentFailures=\(resentFailures.count) "
                + "final=\(finalStored) distinct=\(finalDistinct) finalChanges=\(finalChanges) finalUnread=\(finalUnread) "
                + "integrity=\(integrity) seconds=\(String(format: "%.1f", seconds))"
        }
    }

    func run() throws -> Report {
        var report = Report()
        let fixture = try StormFixture()
        // Two of three workers are killed, so `workerKills` kills need half as many again.
        let pushes = fixture.sealPushes(count: profile.workerKills * 3 / 2)
        report.workers = pushes.count
        let notify = try profile.executable("sotto-notify")
        let environment = fixture.environment
        let started = Date()

        // MARK: Crash phase
        let outcome = Locked((killed: 0, running: 0, acked: Set<String>(), killedIds: Set<String>(), failures: [String]()))
        DispatchQueue.concurrentPerform(iterations: Self.threads) { thread in
            var random = SystemRandomNumberGenerator()
            for index in stride(from: thread, to: pushes.count, by: Self.threads) {
                let push = pushes[index]
                let kill = index % 3 != 0
                do {
                    let worker = try LoggedProcess.launch(notify, ["--payload", "-"], environment: environment)
                    worker.write(String(decoding: push.payload, as: UTF8.self) + "\n")
                    worker.closeStdin()
                    var wasRunning = false
                    if kill {
                        usleep(UInt32.random(in: 0...5_000, using: &random))
                        wasRunning = worker.isRunning
                        worker.signal(SIGKILL)
                    }
                    let status = worker.waitForExit()
                    let acks = worker.output.compactMap { PushAck.parse(Array($0.utf8)) }
                    outcome.update { state in
                        if kill { state.killed += 1; state.killedIds.insert(push.messageId) }
                        if wasRunning && status == 128 + SIGKILL { state.running += 1 }
                        for case .ok(let id, _) in acks {
                            if id == push.messageId { state.acked.insert(id) } else { state.failures.append("ack names \(id)") }
                        }
                        if !kill && status != 0 { state.failures.append("unkilled worker exited \(status): \(worker.output.suffix(2))") }
                    }
                } catch {
                    outcome.update { $0.failures.append("\(error)") }
                }
            }
        }
        let crashed = outcome.value
        report.killed = crashed.killed
        report.killedBeforeExit = crashed.running
        report.acked = crashed.acked.count
        report.harnessFailures = crashed.failures

        // MARK: After the crashes
        let conn = try SQLiteConnection.open(path: fixture.group.databasePath, profile: .worker)
        report.integrityAfterCrash = try Self.integrity(conn)
        let afterCrash = try Self.counts(conn, conversationId: fixture.conversationId)
        report.storedAfterCrash = afterCrash.ids.count
        report.changesAfterCrash = afterCrash.changes
        report.unreadAfterCrash = afterCrash.unread
        report.ackedLost = crashed.acked.subtracting(afterCrash.ids).count
        let killedCommitted = crashed.killedIds.intersection(afterCrash.ids)
        report.killedCommitted = killedCommitted.count
        report.committedUnacked = killedCommitted.subtracting(crashed.acked).count

        // MARK: Every push again, no kills: each stored exactly once overall.
        let resend = Locked((stored: 0, duplicate: 0, failures: [String]()))
        DispatchQueue.concurrentPerform(iterations: Self.threads) { thread in
            for index in stride(from: thread, to: pushes.count, by: Self.threads) {
                let push = pushes[index]
                do {
                    let result = try ChildProcess.run(notify, ["--payload", "-"], environment: environment,
                                                      stdin: String(decoding: push.payload, as: UTF8.self) + "\n")
                    switch (result.status, PushAck.parse(Array(result.stdout.utf8))) {
                    case (0, .ok(let id, let duplicate)?) where id == push.messageId:
                        resend.update { duplicate ? ($0.duplicate += 1) : ($0.stored += 1) }
                    default:
                        resend.update { $0.failures.append("status \(result.status): \(result.stdout.prefix(160))") }
                    }
                } catch {
                    resend.update { $0.failures.append("\(error)") }
                }
            }
        }
        let resent = resend.value
        report.resent = pushes.count
        report.resentStored = resent.stored
        report.resentDuplicate = resent.duplicate
        report.resentFailures = resent.failures
        let final = try Self.counts(conn, conversationId: fixture.conversationId)
        report.finalStored = final.ids.count
        report.finalDistinct = Set(final.ids).intersection(pushes.map(\.messageId)).count
        report.finalChanges = final.changes
        report.finalUnread = final.unread
        report.integrity = try Self.integrity(conn)
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    static func integrity(_ conn: SQLiteConnection) throws -> String {
        try conn.query("PRAGMA integrity_check").map { try $0.string(0) }.joined(separator: "; ")
    }

    /// The message ids of the conversation, its `messageInserted` changes and its unread count:
    /// the three effects one incoming text commits together.
    static func counts(_ conn: SQLiteConnection, conversationId: String) throws -> (ids: [String], changes: Int, unread: Int) {
        let ids = try conn.query("SELECT id FROM message WHERE conversationId = ?", [.text(conversationId)]).map { try $0.string(0) }
        let changes = try conn.queryOne("SELECT count(*) FROM change_log WHERE kind = 'messageInserted' AND conversationId = ?",
                                        [.text(conversationId)])?.int64(0) ?? -1
        let unread = try conn.queryOne("SELECT unreadCount FROM conversation_local_state WHERE conversationId = ?",
                                       [.text(conversationId)])?.int64(0) ?? -1
        return (ids, Int(changes), Int(unread))
    }
}
