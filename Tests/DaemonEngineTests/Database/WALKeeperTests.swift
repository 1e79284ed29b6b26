@testable import DaemonEngine
import DaemonStore
import Foundation
import SharedStore
import Testing
import TestSupport

/// `WALKeeper` is the daemon's only checkpointer (docs/adr/0003); an explode asks it for a
/// TRUNCATE with `checkpointSoon()` instead of checkpointing itself.
@Suite("WAL keeper: the one checkpointer", .serialized)
struct WALKeeperTests {
    @Test func checkpointSoonResetsTheWALBelowTheBudget() async throws {
        let f = try StoreFixture()
        let db = try DaemonDatabase(directory: f.directory)
        let walPath = f.directory.databasePath + "-wal"
        try await db.write { conn in
            _ = try IncomingMessageWriter.write(f.text("some plaintext"), recipientInboxId: f.inboxId,
                                                topic: f.topic, now: f.now, on: conn)
        }
        #expect(WALKeeper.fileSize(walPath) > 0)
        let keeper = WALKeeper(database: db, walPath: walPath)   // 8 MiB budget: far above this WAL
        await keeper.tick()
        #expect(WALKeeper.fileSize(walPath) > 0, "a tick under the budget must not truncate")
        #expect(await keeper.checkpointSoon())
        #expect(WALKeeper.fileSize(walPath) == 0)
        #expect(await keeper.stats.truncated == 1)
    }

    @Test func aRequestHeldBackByAReaderIsRetriedByTheTicks() async throws {
        let f = try StoreFixture()
        let db = try DaemonDatabase(directory: f.directory)
        let walPath = f.directory.databasePath + "-wal"
        try await db.write { conn in
            _ = try IncomingMessageWriter.write(f.text("some plaintext"), recipientInboxId: f.inboxId,
                                                topic: f.topic, now: f.now, on: conn)
        }
        var policy = WALKeeper.Policy()
        policy.tick = .milliseconds(10)
        let keeper = WALKeeper(database: db, walPath: walPath, policy: policy)
        // A foreign reader holds a snapshot: no TRUNCATE can finish while it does.
        let reader = try f.open()
        try reader.execute("BEGIN")
        _ = try MessageRowRepository.count(conversationId: f.conversationId, on: reader)
        #expect(await keeper.checkpointSoon(within: .milliseconds(200)) == false)
        #expect(await keeper.stats.busy >= 1)
        try reader.execute("COMMIT")
        // The request stays: ticks retry it (after the backoff) though the WAL is under budget.
        let deadline = ContinuousClock.now + .seconds(20)
        while WALKeeper.fileSize(walPath) > 0, ContinuousClock.now < deadline {
            await keeper.tick()
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(WALKeeper.fileSize(walPath) == 0)
        #expect(await keeper.stats.truncated == 1)
    }
}
