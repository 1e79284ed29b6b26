import Foundation
import SharedStore
import Testing
import TestSupport

@Suite("Store creation race")
struct CreationRaceTests {
    /// Switching a new file to WAL gets SQLITE_BUSY without the busy handler; the configurator
    /// retries within the busy timeout. Without that, about one race in seven failed here.
    @Test func twoConnectionsRacingOnANewFileBothEndMigrated() async throws {
        for _ in 0..<20 {
            let tmp = try TemporaryDirectory()
            let path = tmp.path + "/shared.sqlite"
            let results = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        do {
                            let conn = try SQLiteConnection.open(path: path, profile: .daemon, create: true)
                            try Migrator.migrate(conn)
                            return "ok"
                        } catch {
                            return "\(error)"
                        }
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(results == ["ok", "ok"])
            let conn = try SQLiteConnection.open(path: path, profile: .worker)
            try SchemaCheck.verify(conn)
        }
    }
}
