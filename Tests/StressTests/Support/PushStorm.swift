import Foundation
import SharedStore
import SottoWire
import TestSupport

/// Issue #7 part 1: a running daemon, both Accept modes of the real worker behind
/// `systemd-socket-activate`, 16 concurrent senders, a foreign sqlite3 reader/locker and a
/// control-socket subscriber, all on one database file. `run()` returns the figures; the
/// test asserts on them.
///
/// ```swift
/// let report = try PushStorm(profile: .short).run()
/// print(report.summaryLine)
/// ```
struct PushStorm {
    let profile: StressProfile

    struct Report: Sendable {
        var pushes = 0
        var acked = 0
        var stored = 0
        var lost = 0
        var duplicates = 0
        var unacked = 0
        var busy = 0
        var otherErrors: [String: Int] = [:]
        var transportFailures: [String] = []
        var changeLogRows = 0
        var changeLogGaps = 0
        var subscriberSeen = 0
        var subscriberMissing = 0
        var subscriberDuplicates = 0
        var subscriberOutOfOrder = 0
        var integrity = ""
        var walPeakBytes: Int64 = 0
        var walEndBytes: Int64 = 0
        var walBudgetBytes: Int64 = 8 * 1024 * 1024
        var truncations = 0
        var checkpointBusy = 0
        var foreignCycles = 0
        var foreignErrors: [String] = []
        var daemonExit: Int32 = -1
        var acceptNoRuns = 0
        var connectRetries = 0
        var workerExits = 0
        var workerFailures = 0
        var kills = 0
        var oomKills = 0
        var workerPeakBytes: Int64 = -1
        var acceptNoWorkerRSS: Int64 = -1
        var slowestWorkerMs: Int64 = 0
        var cgroup = false
        var seconds = 0.0
        var sealSeconds = 0.0

        var summaryLine: String {
            func mb(_ bytes: Int64) -> String { bytes < 0 ? "n/a" : String(format: "%.1fMB", Double(bytes) / 1_048_576) }
            let errors = otherErrors.isEmpty ? "0" : otherErrors.map { "\($0.key):\($0.value)" }.sorted().joined(separator: ",")
            return "STRESS storm: pushes=\(pushes) acked=\(acked) stored=\(stored) lost=\(lost) duplicates=\(duplicates) "
                + "unacked=\(unacked) busy=\(busy) retries=\(connectRetries) acceptNoRuns=\(acceptNoRuns) errors=\(errors) transport=\(transportFailures.count) "
                + "changes=\(changeLogRows) gaps=\(changeLogGaps) subscriber=\(subscriberSeen) missing=\(subscriberMissing) "
                + "integrity=\(integrity) walPeak=\(mb(walPeakBytes)) walEnd=\(mb(walEndBytes)) walBudget=\(mb(walBudgetBytes)) "
                + "truncations=\(truncations) foreignCycles=\(foreignCycles) workers=\(workerExits) kills=\(kills) oom=\(oomKills) "
                + "workerPeak=\(mb(workerPeakBytes)) acceptNoRSS=\(mb(acceptNoWorkerRSS)) slowestWorker=\(slowestWorkerMs)ms "
                + "cgroup=\(cgroup ? "24MB" : "none") seconds=\(String(format: "%.1f", seconds)) sealSeconds=\(String(format: "%.1f", sealSeconds))"
        }
    }

    private func phase(_ text: String) {
        FileHandle.standardError.write(Data("stress storm: \(text)\n".utf8))
    }

    func run() throws -> Report {
        var report = Report()
        let fixture = try StormFixture()
        let sealStart = Date()
        let pushes = fixture.sealPushes(count: profile.pushes)
        report.sealSeconds = Date().timeIntervalSince(sealStart)
        report.pushes = pushes.count
        phase("sealed \(pushes.count) pushes in \(String(format: "%.1f", report.sealSeconds)) s")
        let environment = fixture.environment
        let notify = try profile.executable("sotto-notify")
        let jail = try WorkerJail(directory: fixture.tmp.path)
        defer { jail.remove() }
        report.cgroup = jail.cgroupParent != nil

        // The daemon first: it checkpoints, follows the change feed, serves the control socket.
        let daemon = try LoggedProcess.launch(try profile.executable("sotto"), ["daemon"], environment: environment)
        guard daemon.waitForLine(containing: "ready:", timeout: 60) else {
            daemon.signal(SIGKILL)
            throw StressFailure("daemon did not start: \(daemon.output.suffix(5))")
        }
        let control = fixture.runtime.controlSocketPath
        let subscriber = try ControlFeedSubscriber(socketPath: control, since: 0)

        // Both Accept modes, each a real systemd-socket-activate.
        let acceptYes = try PushSocketServer.start(socketPath: fixture.tmp.path + "/push-yes.sock", accept: true,
                                                  command: jail.command([notify], label: "yes"), environment: environment)
        // Accept=no: the worker exits when idle (as under systemd); like the socket unit, a
        // supervisor starts it again, and a sender that meets the gap retries.
        let acceptNoPath = fixture.tmp.path + "/push-no.sock"
        let acceptNoCommand = jail.command([notify, "--idle-timeout", "2"], label: "no")
        let acceptNoRuns = Locked(0)
        let supervisorDone = DispatchSemaphore(value: 0)
        let stopSupervisor = Locked(false)
        let first = Locked<PushSocketServer?>(try PushSocketServer.start(socketPath: acceptNoPath, accept: false,
                                                               command: acceptNoCommand, environment: environment))
        let supervisor = Thread {
            while !stopSupervisor.value {
                guard let activator = first.update({ slot in defer { slot = nil }; return slot }) ?? (try? PushSocketServer.start(socketPath: acceptNoPath, accept: false,
                                                                           command: acceptNoCommand, environment: environment))
                else { break }
                acceptNoRuns.update { $0 += 1 }
                _ = activator.waitForExit()
                unlink(acceptNoPath)
            }
            supervisorDone.signal()
        }
        supervisor.start()
        let foreign = try ForeignSQLite.start(databasePath: fixture.group.databasePath)

        // A WAL sampler (measurement only) and a reader on the daemon's control socket.
        let walPath = fixture.group.databasePath + "-wal"
        let stormDone = Locked(false)
        let walPeak = Locked<Int64>(0)
        let sampler = Thread {
            while !stormDone.value {
                var info = stat()
                if stat(walPath, &info) == 0 { walPeak.update { $0 = max($0, Int64(info.st_size)) } }
                usleep(20_000)
            }
        }
        sampler.start()

        // The storm: 16 senders, each alternating between the two sockets.
        let acks = Locked([String: Int]())      // ok messageId → count
        let errors = Locked([String: Int]())    // error code → count
        let transport = Locked([String]())
        let started = Date()
        let senders = profile.senders
        let sockets = [acceptYes.socketPath, acceptNoPath]
        let retries = Locked(0)
        DispatchQueue.concurrentPerform(iterations: senders) { sender in
            var round = 0
            for index in stride(from: sender, to: pushes.count, by: senders) {
                let push = pushes[index]
                let socket = sockets[(round + sender) % 2]
                round += 1
                do {
                    var attempt = 0
                    var sent: String?
                    while sent == nil {
                        do {
                            sent = try PushClient.send(push.payload, to: socket)
                        } catch let failure as PushClient.Failure where failure.message.hasPrefix("connect") && attempt < 500 {
                            attempt += 1  // the Accept=no worker is between runs: retry like an outbox
                            retries.update { $0 += 1 }
                            usleep(10_000)
                        }
                    }
                    let line = sent!
                    switch PushAck.parse(Array(line.utf8)) {
                    case .ok(let id, let duplicate)?:
                        if id != push.messageId { transport.update { $0.append("ack names \(id), sent \(push.messageId)") } }
                        acks.update { $0[id, default: 0] += duplicate ? 100 : 1 }
                    case .error(let error)?:
                        errors.update { $0[error.code.rawValue, default: 0] += 1 }
                    case nil:
                        transport.update { $0.append("unparseable ack '\(line.prefix(80))'") }
                    }
                } catch {
                    transport.update { $0.append("\(error)") }
                }
            }
        }
        phase("storm done")
        report.seconds = Date().timeIntervalSince(started)

        // Quiesce: the Accept=no worker's peak RSS while it idles, then its idle exit.
        report.acceptNoWorkerRSS = jail.liveWorkerPeakRSS().max() ?? -1
        phase("stopping foreign sqlite3")
        let foreignResult = foreign.stop()
        report.foreignCycles = foreignResult.cycles
        report.foreignErrors = foreignResult.errors
        phase("waiting for the Accept=no worker idle exit")
        stopSupervisor.update { $0 = true }
        supervisorDone.wait()
        report.acceptNoRuns = acceptNoRuns.value
        report.connectRetries = retries.value
        phase("stopping Accept=yes")
        acceptYes.stop()
        stormDone.update { $0 = true }
        report.walPeakBytes = walPeak.value

        // What the database holds.
        let conn = try SQLiteConnection.open(path: fixture.group.databasePath, profile: .worker)
        let storedIds = try conn.query("SELECT id FROM message WHERE conversationId = ?", [.text(fixture.conversationId)])
            .map { try $0.string(0) }
        let changeSeqs = try conn.query("SELECT seq FROM change_log ORDER BY seq").map { try $0.int64(0) }
        let okAcks = acks.value
        report.acked = okAcks.count
        report.stored = storedIds.count
        let storedSet = Set(storedIds)
        report.lost = okAcks.keys.filter { !storedSet.contains($0) }.count
        report.duplicates = okAcks.values.filter { $0 != 1 }.count + (storedIds.count - storedSet.count)
        report.unacked = storedSet.subtracting(okAcks.keys).count
        var errorCounts = errors.value
        report.busy = errorCounts.removeValue(forKey: "busy") ?? 0
        report.otherErrors = errorCounts
        report.transportFailures = transport.value
        report.changeLogRows = changeSeqs.count
        report.changeLogGaps = zip(changeSeqs, changeSeqs.dropFirst()).filter { $1 != $0 + 1 }.count

        phase("waiting for the subscriber")
        // The subscriber must have seen every seq, once, in order.
        if let last = changeSeqs.last { subscriber.waitUntilSeen(seq: last, timeout: 60) }
        let seen = subscriber.seqs
        report.subscriberSeen = seen.count
        report.subscriberMissing = Set(changeSeqs).subtracting(seen).count
        report.subscriberDuplicates = seen.count - Set(seen).count
        report.subscriberOutOfOrder = zip(seen, seen.dropFirst()).filter { $1 <= $0 }.count
        subscriber.close()

        phase("waiting for the WAL keeper")
        // The WAL ends bounded: the daemon's keeper truncates above its budget (it backs off
        // while the storm keeps it busy, up to 30 s, so give it that long).
        let deadline = Date(timeIntervalSinceNow: 45)
        var status = try ControlCall.call(control, method: "status")
        while (status["walBytes"] as? NSNumber)?.int64Value ?? 0 > report.walBudgetBytes, Date() < deadline {
            usleep(250_000)  // the keeper ticks every 500 ms; this only paces the status calls
            status = try ControlCall.call(control, method: "status")
        }
        if let checkpoints = status["checkpoints"] as? [String: Any] {
            report.truncations = (checkpoints["truncate"] as? NSNumber)?.intValue ?? 0
            report.checkpointBusy = (checkpoints["busy"] as? NSNumber)?.intValue ?? 0
        }
        report.walEndBytes = WorkerJail.fileSize(walPath)

        phase("stopping the daemon")
        daemon.signal(SIGTERM)
        report.daemonExit = daemon.waitForExit()
        report.integrity = (try conn.queryOne("PRAGMA integrity_check")?.string(0)) ?? "none"

        // How every worker process ended.
        let exits = try jail.stats()
        report.workerExits = exits.count
        report.workerFailures = exits.filter { $0.status != 0 }.count
        report.kills = exits.filter { $0.status > 128 }.count + (report.daemonExit > 128 ? 1 : 0)
        report.oomKills = exits.reduce(0) { $0 + $1.oomKills }
        // Accept=yes workers: one push each, under the unit's 24 MB and 30 s. (An Accept=no
        // worker lives for the whole storm and its page cache fills its cgroup, which is
        // reclaimable; its own memory is `acceptNoWorkerRSS`.)
        let oneShot = exits.filter { $0.label == "yes" }
        report.workerPeakBytes = oneShot.map(\.peakBytes).max() ?? -1
        report.slowestWorkerMs = oneShot.map(\.durationMs).max() ?? 0
        return report
    }
}
