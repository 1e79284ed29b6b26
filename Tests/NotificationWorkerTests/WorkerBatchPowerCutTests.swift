import Foundation
import SottoWire
import TestSupport
import Testing

/// Issue #21: a batch on push.sock (docs/push-batch.md) killed at its named steps, the power
/// cut with it. The group directory lies on the power-cut file system (docs/adr/0037), which
/// forgets what was not fsynced; the worker is the real one behind systemd-socket-activate
/// (`BatchPowerCut`).
///
/// Each case: a first batch is acked ok (the relay has let go of it); the worker of a second
/// batch SIGKILLs itself at `point`, and the power goes with it (`cut`). After the remount:
/// every push acked ok is stored exactly once; the unacked batch is all there (its commit
/// was fsynced before `batch.committed`) or not at all (`batch.beforeCommit`), never in part,
/// with one change_log row per kept message and no other table touched; `PRAGMA integrity_check` is ok; and the
/// relay's redelivery of both batches is acked ok for each push and leaves one row per message.
@Suite("Worker batches: power cut", .serialized,
       .enabled(if: PowerCutFileSystem.isAvailable, "needs root, /dev/fuse and fusermount3"))
struct WorkerBatchPowerCutTests {
    @Test("Killed at a batch's named step and the power cut with it: acked pushes kept once, the unacked batch whole or absent, the file sound, redelivery completes it without a duplicate",
          arguments: ["batch.beforeCommit", "batch.committed"],
          [PowerCutFileSystem.Cut.all, .subset(seed: 21, keepPercent: 50), .torn(seed: 21)])
    func batchSurvivesPowerCut(point: String, cut: PowerCutFileSystem.Cut) throws {
        let outcome = try BatchPowerCut.run(point: point, cut: cut)
        print("WORKER batch power cut \(point) (\(cut)): \(outcome)")

        #expect(outcome.acksBeforeCut.allSatisfy { if case .ok(_, false)? = $0 { true } else { false } },
                "\(outcome.acksBeforeCut.prefix(3))")
        #expect(outcome.acksAtCrash.count == BatchPowerCut.unackedCount && outcome.acksAtCrash.allSatisfy { $0 == nil },
                "the worker answered instead of dying at \(point): \(outcome.acksAtCrash.prefix(3))")
        #expect(outcome.integrityAfterCut == "ok")
        #expect(outcome.ackedRows == Array(repeating: 1, count: BatchPowerCut.ackedCount), "acked ok, then lost or doubled")
        #expect(outcome.unackedKept == (point == "batch.committed" ? BatchPowerCut.unackedCount : 0),
                "the unacked batch in part, or not as its step left it")
        #expect(outcome.duplicatesAfterCut == 0)
        #expect(outcome.otherTablesUnchanged, "the batches wrote elsewhere than their messages, change_log and receipts")
        #expect(outcome.changeLogAdded == Int64(outcome.ackedRows.reduce(0, +) + outcome.unackedKept),
                "one change per kept message, none for a message not kept")
        #expect(outcome.redeliveryAcks == outcome.expectedRedeliveryAcks, "\(outcome.redeliveryAcks.prefix(3))")
        #expect(outcome.integrityAfterRedelivery == "ok")
        #expect(outcome.rowsAfterRedelivery == outcome.expectedRowsAfterRedelivery)
    }

    @Test("The control: without the WAL's fsync (wal-commit, docs/adr/0058 row 1) the same cut loses pushes acked ok, so the check above can fail")
    func ackedPushesNeedTheWalSync() throws {
        let outcome = try BatchPowerCut.run(point: "batch.committed", cut: .all, mutation: .walCommit)
        print("WORKER batch power cut, mutant wal-commit: \(outcome)")
        #expect(outcome.ackedRows.contains(0), "no acked push was lost without the WAL's fsync: \(outcome)")
    }
}
