import Foundation
import SharedStore
import SottoWire
import TestSupport

/// One run of the worker's batch path with the group directory on the power-cut file system:
/// a batch acked ok, then a batch whose worker SIGKILLs itself at `point`, the power cut with
/// it (`cut`), the disk mounted again, and the relay's redelivery of both batches on one
/// connection. What each stage left is recorded for the test to judge.
///
/// ```swift
/// let outcome = try BatchPowerCut.run(point: "batch.committed", cut: .all)
/// outcome.ackedRows       // rows per acked push after the remount: all 1
/// ```
struct BatchPowerCut: CustomStringConvertible {
    static let ackedCount = 12
    static let unackedCount = 40

    var acksBeforeCut: [PushAck?] = []
    var acksAtCrash: [PushAck?] = []
    var cutSummary = ""
    /// After the remount: rows of each acked push, how many unacked pushes are there, whether
    /// any message has two rows, `PRAGMA integrity_check`, whether every table but those an ok
    /// push writes is as it was before the pushes, and how many change_log rows were added.
    var ackedRows: [Int] = []
    var unackedKept = 0
    var duplicatesAfterCut = 0
    var integrityAfterCut = ""
    var otherTablesUnchanged = false
    var changeLogAdded: Int64 = -1
    /// The redelivery of both batches: its acks, and the rows per message after it.
    var redeliveryAcks: [PushAck?] = []
    var expectedRedeliveryAcks: [PushAck?] = []
    var rowsAfterRedelivery: [String: Int] = [:]
    var expectedRowsAfterRedelivery: [String: Int] = [:]
    var integrityAfterRedelivery = ""

    var description: String {
        "cut: \(cutSummary); acked rows \(ackedRows) unacked kept \(unackedKept)/\(Self.unackedCount) "
            + "duplicates \(duplicatesAfterCut) integrity \(integrityAfterCut)/\(integrityAfterRedelivery)"
    }

    /// `mutation`: an fsync removed from every worker (debug builds), for the control case.
    static func run(point: String, cut: PowerCutFileSystem.Cut, mutation: SyncMutation? = nil) throws -> BatchPowerCut {
        var outcome = BatchPowerCut()
        let tmp = try TemporaryDirectory(prefix: "sotto-batchcut")
        let disk = try PowerCutFileSystem.mount(in: tmp.path)
        defer { disk.abandon() }
        guard let vectors = try Vectors.load() else { throw PushClient.Failure(message: "no test vectors") }
        let f = try WorkerFixture(vectors: vectors, groupIn: disk.mountpoint)
        // Taken before the story: between the pushes and the cut the test opens no connection,
        // whose close would checkpoint and fsync what the workers wrote.
        let before = try f.snapshot()
        try disk.syncEverything()  // the device was set up long ago
        let socketPath = f.tmp.path + "/push.sock"
        let worker = try WorkerRun.worker()
        let environment = f.environment.merging(mutation.map { [SyncMutation.variable: $0.rawValue] } ?? [:]) { $1 }

        let acked = try (0..<ackedCount).map { try f.sealTextForRelay("acked \($0)") }
        let plain = try PushSocketServer.start(socketPath: socketPath, accept: true, command: [worker], environment: environment)
        outcome.acksBeforeCut = try PushClient.sendBatch(acked.map(\.payload), to: socketPath)
        plain.stop()

        let unacked = try (0..<unackedCount).map { try f.sealTextForRelay("unacked \($0)") }
        let crashing = try PushSocketServer.start(socketPath: socketPath, accept: true, command: [worker],
                                                  environment: environment.merging([CrashPoint.variable: point]) { $1 })
        outcome.acksAtCrash = try PushClient.sendBatch(unacked.map(\.payload), to: socketPath)
        outcome.cutSummary = try disk.powerCycle(cut) { crashing.stop() }

        // What the disk kept.
        let kept = try rows(f)
        outcome.integrityAfterCut = kept.integrity
        outcome.ackedRows = acked.map { kept.counts[$0.messageId] ?? 0 }
        outcome.unackedKept = unacked.filter { kept.counts[$0.messageId] != nil }.count
        outcome.duplicatesAfterCut = kept.counts.values.filter { $0 > 1 }.count
        outcome.otherTablesUnchanged = try f.snapshotBesidesMessage(since: before) == before
        outcome.changeLogAdded = (try f.snapshot()["change_log"] ?? -1) - (before["change_log"] ?? 0)

        // The relay redelivers both batches; whatever was stored before is a duplicate.
        let again = try PushSocketServer.start(socketPath: socketPath, accept: true, command: [worker],
                                               environment: f.environment)
        let all = acked + unacked
        outcome.redeliveryAcks = try PushClient.sendBatch(all.map(\.payload), to: socketPath)
        again.stop()
        outcome.expectedRedeliveryAcks = all.map { .ok(messageId: $0.messageId, duplicate: kept.counts[$0.messageId] != nil) }
        let final = try rows(f)
        outcome.integrityAfterRedelivery = final.integrity
        outcome.rowsAfterRedelivery = final.counts
        outcome.expectedRowsAfterRedelivery = Dictionary(uniqueKeysWithValues: all.map { ($0.messageId, 1) })
        try disk.unmount()
        return outcome
    }

    /// Rows per message id, and `PRAGMA integrity_check`, on a connection closed on return.
    private static func rows(_ f: WorkerFixture) throws -> (counts: [String: Int], integrity: String) {
        let conn = try f.open()
        let integrity = try conn.query("PRAGMA integrity_check").map { try $0.string(0) }.joined(separator: "; ")
        var counts: [String: Int] = [:]
        for row in try conn.query("SELECT id, COUNT(*) FROM message GROUP BY id") {
            counts[try row.string(0)] = Int(try row.int64(1))
        }
        return (counts, integrity)
    }
}
