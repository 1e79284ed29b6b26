@testable import DaemonEngine
import Foundation
import DaemonStore
import SharedStore
import Testing
import TestSupport

@Suite("Daemon database (SharedStore connections, no GRDB)", .serialized)
struct DaemonDatabaseTests {
    @Test func theWriterAndEveryReaderHaveEveryPragma() throws {
        let f = try StoreFixture(seed: false)
        let db = try DaemonDatabase(directory: f.directory)
        let expected = PragmaReport.expected(for: .daemon)
        #expect(try db.withWriterConnection { try PragmaReport.read($0.handle) } == expected)
        #expect(try db.read { try SchemaCheck.userVersion($0) } == Schema.currentVersion)
        // Four reads held open together (on threads of their own: the cooperative pool may
        // have fewer): the pool has to open four reader connections.
        let inside = ReadersInside()
        let results = Results()
        let done = DispatchGroup()
        for _ in 0..<4 {
            done.enter()
            Thread {
                results.append(Result {
                    try db.read { conn in
                        inside.enterAndWait(forAll: 4)
                        return (try PragmaReport.read(conn.handle), Int(bitPattern: UnsafeRawPointer(conn.handle)))
                    }
                })
                done.leave()
            }.start()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        let reports = try results.values.map { try $0.get() }
        #expect(inside.allArrived, "the four reads did not run at the same time")
        #expect(Set(reports.map(\.1)).count == 4, "reads shared a connection")
        for (report, _) in reports { #expect(report == expected) }
    }

    @Test func walPersistsAfterTheDatabaseCloses() throws {
        let f = try StoreFixture(seed: false)
        do {
            let db = try DaemonDatabase(directory: f.directory)
            try db.write { conn in try f.seedInbox(on: conn) }
        }
        #expect(FileManager.default.fileExists(atPath: f.directory.databasePath + "-wal"))
    }

    @Test func writersRunInOneTransactionThatAnErrorRollsBack() async throws {
        let f = try StoreFixture()
        let db = try DaemonDatabase(directory: f.directory)
        let conversationId = f.conversationId
        let message = f.text("from the daemon")
        let outcome = try await db.write { conn in
            try IncomingMessageWriter.write(message, recipientInboxId: f.inboxId, topic: f.topic, now: f.now, on: conn)
        }
        guard case .written = outcome else { Issue.record("refused"); return }
        #expect(try db.read { try LocalStateRepository.state(of: conversationId, on: $0)?.unreadCount } == 1)

        // A later writer's error rolls back the earlier writer of the same write.
        #expect(throws: IncomingWriteError.unknownSender) {
            try db.write { conn in
                _ = try IncomingMessageWriter.write(f.text("kept only if the write commits"), recipientInboxId: f.inboxId,
                                                    topic: f.topic, now: f.now, on: conn)
                var bad = f.text("x")
                bad.senderPublicKey = "02" + StoreFixture.randomHex(32)
                return try IncomingMessageWriter.write(bad, recipientInboxId: f.inboxId, topic: f.topic, now: f.now, on: conn)
            }
        }
        #expect(try db.read { try MessageRowRepository.count(conversationId: conversationId, on: $0) } == 1)
    }

    @Test func aReadSeesOneSnapshotWhileAnotherProcessCommits() throws {
        let f = try StoreFixture()
        let db = try DaemonDatabase(directory: f.directory)
        let worker = try f.open()
        let (before, after) = try db.read { conn -> (Int64, Int64) in
            let before = try MessageRowRepository.count(conversationId: f.conversationId, on: conn)
            let outcome = try worker.immediateTransaction { () throws(IncomingWriteError) in
                try IncomingMessageWriter.write(f.text("committed mid-read"), recipientInboxId: f.inboxId,
                                                topic: f.topic, now: f.now, on: worker)
            }
            if case .written = outcome {} else { Issue.record("the worker's write was refused") }
            return (before, try MessageRowRepository.count(conversationId: f.conversationId, on: conn))
        }
        #expect(before == 0 && after == 0, "the read saw a commit made after it began")
        #expect(try db.read { try MessageRowRepository.count(conversationId: f.conversationId, on: $0) } == 1)
    }

    @Test func writesWaitingForAWorkersLockHoldNoCooperativeThread() async throws {
        let f = try StoreFixture()
        var profile = ConnectionProfile.daemon
        // Long enough that a loaded machine's slow read cannot outlast it (a CI run saw 3 s
        // pass); without the feature the read still waits for the writes to fail, so it fails.
        profile.busyTimeoutMs = 30_000
        let db = try DaemonDatabase(directory: f.directory, profile: profile)
        let conversationId = f.conversationId
        // A worker holds the write lock; more writes wait than the machine has cooperative threads.
        let worker = try f.open()
        try worker.execute("BEGIN IMMEDIATE")
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        let writes = (0..<count).map { index in
            Task { try await db.write { conn in
                try LocalStateWriter.markRead(conversationId: conversationId, at: f.now + Int64(index), on: conn)
            } }
        }
        // Still served while they wait: had each waiting write held a cooperative thread, this
        // read could only start after they failed with .busy at the timeout.
        let unread = try await Task { try db.read { conn in try LocalStateRepository.state(of: conversationId, on: conn)?.unreadCount } }.value
        #expect(unread == 0)
        try worker.execute("COMMIT")
        for write in writes { _ = try await write.value }
    }

    @Test func twoDaemonsRacingToMigrateBothSucceed() async throws {
        let f = try StoreFixture(seed: false)
        let directory = f.directory
        try await withThrowingTaskGroup(of: Int64.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    let db = try DaemonDatabase(directory: directory)
                    return try db.read { try SchemaCheck.userVersion($0) }
                }
            }
            for try await version in group { #expect(version == Schema.currentVersion) }
        }
    }

    @Test func newerSchemaAndGarbageAreCleanErrors() throws {
        let f = try StoreFixture()
        let newer = Schema.currentVersion + 1
        try f.open().execute("PRAGMA user_version = \(newer)")
        #expect(throws: StoreError.schemaTooNew(found: newer, known: Schema.currentVersion)) {
            _ = try DaemonDatabase(directory: f.directory)
        }
        let g = try StoreFixture(seed: false)
        try Data(repeating: 0x5a, count: 4096).write(to: URL(fileURLWithPath: g.directory.databasePath))
        #expect {
            _ = try DaemonDatabase(directory: g.directory)
        } throws: { error in
            if case .corrupt = error as? StoreError { return true }
            return false
        }
    }
}

/// What the reader threads above returned.
private final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Result<(PragmaReport, Int), any Error>] = []

    func append(_ result: Result<(PragmaReport, Int), any Error>) {
        lock.lock()
        stored.append(result)
        lock.unlock()
    }

    var values: [Result<(PragmaReport, Int), any Error>] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}

/// A barrier for the reads above: each waits (with a deadline, never for ever) until all are inside.
private final class ReadersInside: @unchecked Sendable {
    private let condition = NSCondition()
    private var count = 0
    private(set) var allArrived = false

    func enterAndWait(forAll total: Int) {
        condition.lock()
        defer { condition.unlock() }
        count += 1
        if count >= total { allArrived = true }
        condition.broadcast()
        let deadline = Date().addingTimeInterval(10)
        while count < total, condition.wait(until: deadline) {}
    }
}
