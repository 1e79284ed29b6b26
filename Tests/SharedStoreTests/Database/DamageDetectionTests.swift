import Foundation
import DaemonStore
import SharedStore
import Testing
import TestSupport

/// The pieces the Damage suite's end-to-end tests rest on: SQLite's extended codes named,
/// the quick check bounded by its budget, the marker's first reason kept.
@Suite("Damage detection")
struct DamageDetectionTests {
    @Test("extended result codes keep their SQLite names; damage and a full disk are their own errors")
    func namesAndClassification() {
        #expect(SQLiteResultCode.name(11) == "SQLITE_CORRUPT")
        #expect(SQLiteResultCode.name(779) == "SQLITE_CORRUPT_INDEX")
        #expect(SQLiteResultCode.name(26) == "SQLITE_NOTADB")
        #expect(SQLiteResultCode.name(13) == "SQLITE_FULL")
        #expect(SQLiteResultCode.name(778) == "SQLITE_IOERR_WRITE")
        #expect(SQLiteResultCode.name(11 | 40 << 8) == "SQLITE_CORRUPT (extended 10251)")
        #expect(StoreError.classify(code: 779, message: "m") == .corrupt(code: 779, message: "m"))
        #expect(StoreError.classify(code: 13, message: "m") == .diskFull(code: 13, message: "m"))
        #expect("\(StoreError.diskFull(code: 13, message: "database or disk is full"))".hasPrefix("disk full"))
        #expect("\(StoreError.corrupt(code: 779, message: "x"))".contains("damaged (SQLITE_CORRUPT_INDEX"))
    }

    @Test("the quick check finds a sound file sound, and a budget stops it as incomplete, never as damaged")
    func quickCheckBudget() throws {
        let fixture = try StoreFixture()
        let conn = try fixture.open()
        try conn.immediateTransaction { () throws(StoreError) in
            for index in 0..<3000 {
                try conn.run("INSERT INTO change_log(kind, conversationId, entityId, writerPid, createdAt) VALUES ('x', NULL, ?, 1, 0)",
                             [.text(String(repeating: "e", count: 100) + "\(index)")])
            }
        }
        #expect(IntegrityCheck.quick(conn, budgetMs: nil) == .sound)
        // What the budget costs in time belongs to a benchmark; here only that it stops the check.
        guard case .incomplete = IntegrityCheck.quick(conn, budgetMs: 0) else {
            Issue.record("a zero budget did not stop the check")
            return
        }
        #expect(IntegrityCheck.quick(conn, budgetMs: nil) == .sound)  // the handler is removed again
    }

    @Test("the marker keeps the first reason and is cleared")
    func markerKeepsFirstReason() throws {
        let tmp = try TemporaryDirectory()
        let marker = DamageMarker(databasePath: tmp.path + "/shared.sqlite")
        #expect(!marker.isPresent && marker.reason() == nil)
        #expect(marker.mark("first"))
        #expect(marker.mark("second"))
        #expect(marker.isPresent && marker.reason() == "first")
        #expect(marker.clear() && !marker.isPresent)
    }
}
