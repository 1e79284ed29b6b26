import Foundation
import GRDB
@testable import SottoDaemon
import SharedStore
import Testing
import TestSupport

@Suite("Daemon database (GRDB side)", .serialized)
struct DaemonDatabaseTests {
    @Test func everyPoolConnectionHasEveryPragma() async throws {
        let f = try StoreFixture(seed: false)
        let db = try DaemonDatabase(directory: f.directory)
        let expected = PragmaReport.expected(for: .daemon)
        let writer = try await db.pool.writeWithoutTransaction { try PragmaReport.read($0.sqliteConnection!) }
        #expect(writer == expected)
        #expect(try db.read { try SchemaCheck.userVersion($0) } == Schema.currentVersion)
        // Several readers at once, so the pool has to open more than one reader connection.
        let reports = try await withThrowingTaskGroup(of: (PragmaReport, String).self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try await db.pool.read { conn in
                        Thread.sleep(forTimeInterval: 0.05)   // keep this reader busy so others open
                        return (try PragmaReport.read(conn.sqliteConnection!),
                                String(describing: conn.sqliteConnection!))
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(reports.map(\.1)).count > 1, "only one reader connection was used")
        for (report, _) in reports { #expect(report == expected) }
    }

    @Test func walPersistsAfterThePoolCloses() throws {
        let f = try StoreFixture(seed: false)
        do {
            let db = try DaemonDatabase(directory: f.directory)
            try db.write { conn in try f.seedInbox(on: conn) }
        }
        #expect(FileManager.default.fileExists(atPath: f.directory.databasePath + "-wal"))
    }

    @Test func writersRunInGRDBTransactionAndObservationsRefetch() async throws {
        let f = try StoreFixture()
        let db = try DaemonDatabase(directory: f.directory)
        let conversationId = f.conversationId
        var values = db.observe { conn in
            try LocalStateRepository.state(of: conversationId, on: conn)?.unreadCount ?? -1
        }.makeAsyncIterator()
        #expect(try await values.next() == 0)
        let message = f.text("from the daemon")
        let outcome = try await db.write { conn in
            try IncomingMessageWriter.write(message, recipientInboxId: f.inboxId, topic: f.topic, now: f.now, on: conn)
        }
        guard case .written = outcome else { Issue.record("refused"); return }
        #expect(try await values.next() == 1)

        // A writer error rolls the GRDB transaction back.
        #expect(throws: IncomingWriteError.unknownSender) {
            try db.write { conn in
                var bad = f.text("x")
                bad.senderPublicKey = "02" + StoreFixture.randomHex(32)
                return try IncomingMessageWriter.write(bad, recipientInboxId: f.inboxId, topic: f.topic, now: f.now, on: conn)
            }
        }
        #expect(try db.read { try MessageRepository.count(conversationId: conversationId, on: $0) } == 1)
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
        try f.open().execute("PRAGMA user_version = 7")
        #expect(throws: StoreError.schemaTooNew(found: 7, known: Schema.currentVersion)) {
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
