@testable import DaemonEngine
import Foundation
import Testing
import TestSupport
import SharedStore
import SottoCrypto

/// One mapping from SQLite result codes to `StoreError` (SharedStore's), for the daemon's
/// connections as for the worker's: the extended code and the failing statement's SQL text are
/// kept; the values bound to it never are (no secret in a log line).
@Suite("StoreError mapping")
struct StoreErrorMappingTests {
    @Test func aFailedWriteKeepsItsExtendedCodeAndStatementButNoBoundValue() throws {
        let f = try StoreFixture(seed: false)
        let db = try DaemonDatabase(directory: f.directory)
        let secret = "secret-" + StoreFixture.randomHex(8)
        let insert = "INSERT INTO inbox(inboxId, clientId, createdAt) VALUES (?, ?, 0)"
        _ = try db.write { conn in try conn.run(insert, [.text(secret), .text(SecureRandom.uuidV4())]) }
        let error = try #require(throws: StoreError.self) {
            try db.write { conn in try conn.run(insert, [.text(secret), .text(SecureRandom.uuidV4())]) }
        }
        guard case .sqlite(let code, let message, let statement) = error else {
            Issue.record("not .sqlite: \(error)"); return
        }
        #expect(SQLiteResultCode.primary(code) == SQLiteResultCode.constraint)
        #expect(code > 0xff, "the extended code was dropped")
        #expect(SQLiteResultCode.name(code) == "SQLITE_CONSTRAINT_PRIMARYKEY")
        #expect(statement == insert)
        #expect(message.contains("inbox.inboxId"))
        #expect("\(error)".contains(insert))
        #expect(!"\(error)".contains(secret), "a bound value reached the error text")
    }

    @Test func aFailedPrepareKeepsItsStatement() throws {
        let f = try StoreFixture(seed: false)
        let db = try DaemonDatabase(directory: f.directory)
        let error = try #require(throws: StoreError.self) {
            try db.read { conn in try conn.query("SELECT x FROM nowhere") }
        }
        #expect(error.statement == "SELECT x FROM nowhere")
        #expect(error == .sqlite(code: SQLiteResultCode.error, message: "no such table: nowhere",
                                 statement: "SELECT x FROM nowhere"))
    }

    @Test func namedCodesClassifyAsBefore() {
        #expect(StoreError.classify(code: 779, message: "m", statement: "SELECT 1") == .corrupt(code: 779, message: "m", statement: "SELECT 1"))
        #expect(StoreError.classify(code: SQLiteResultCode.full, message: "m") == .diskFull(code: 13, message: "m"))
        #expect(StoreError.classify(code: SQLiteResultCode.busy | (2 << 8), message: "m") == .busy)
        #expect(StoreError.classify(code: SQLiteResultCode.ioErrorNoMemory, message: "m") == .sqlite(code: 3082, message: "m"))
        #expect(SQLiteResultCode.primary(779) == SQLiteResultCode.corrupt)
        let long = "SELECT " + String(repeating: "x, ", count: 200) + "1"
        let kept = StoreError.classify(code: SQLiteResultCode.error, message: "m", statement: long).statement ?? ""
        #expect(kept.count <= 241 && kept.hasPrefix("SELECT x, x"))
    }
}
