import Foundation
import Testing

/// Issue #11: every SQL statement lives in SharedStore (what the worker runs) or DaemonStore
/// (what only the daemon runs, docs/adr/0043); the daemon, the wire and crypto modules, the
/// relay, the `sotto` executable and the daemon benchmarks hold no SQL text and no GRDB
/// (docs/adr/0023). Reads the sources, so a new `conn.query("SELECT …")` there fails.
@Suite("SQL lives in SharedStore")
struct SQLOwnershipTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// What SQL looks like in Swift source: a statement keyword at the start of a string
    /// literal or a line, a pragma, or a call into SQLite's C API.
    static let patterns = [
        #""\s*(SELECT|INSERT|UPDATE|DELETE|PRAGMA|BEGIN|COMMIT|ROLLBACK|ATTACH|CREATE|DROP)\b"#,
        #"^\s*(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|WHERE|PRAGMA)\b"#,
        #"\bsqlite3_\w+\("#,
        #"\.(query|queryOne|execute|prepare)\("#,
        #"\b(conn|connection|writer|reader)\.run\("#,
        #"^\s*import GRDB\b"#,
    ]

    static func offences(under folder: String) throws -> [String] {
        let root = Self.packageRoot.appendingPathComponent(folder)
        guard let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        let regexes = try patterns.map { try NSRegularExpression(pattern: $0, options: [.anchorsMatchLines]) }
        var found: [String] = []
        for case let url as URL in files where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("//") { continue }   // doc comments may show SQL
                let line = String(line)
                let range = NSRange(line.startIndex..., in: line)
                if regexes.contains(where: { $0.firstMatch(in: line, range: range) != nil }) {
                    found.append("\(folder)/\(url.lastPathComponent):\(number + 1): \(trimmed)")
                }
            }
        }
        return found
    }

    @Test(arguments: ["Sources/SottoDaemon", "Sources/DaemonCore", "Sources/DaemonEngine", "Sources/ControlServer",
                      "Sources/DaemonLogging", "Sources/MainProcess", "Sources/SottoClient", "Sources/NotificationWorker",
                      "Sources/SottoWire", "Sources/SottoCrypto", "Sources/ControlProtocol",
                      "Sources/RelayTransport", "Sources/RelayReceiver",
                      "Benchmarks/DaemonBench", "Benchmarks/DaemonE2EBench"])
    func noSQLOutsideSharedStore(folder: String) throws {
        let offences = try Self.offences(under: folder)
        #expect(offences.isEmpty, Comment(rawValue: "SQL outside SharedStore:\n" + offences.joined(separator: "\n")))
    }

    /// Issue #18: the control socket's dispatcher talks to services only. A repository or a
    /// database read there is a service's job done in the wrong place.
    @Test func theDispatcherReadsNoTable() throws {
        let url = Self.packageRoot.appendingPathComponent("Sources/SottoDaemon/Control/RPCDispatcher.swift")
        let offences = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
            .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            .filter { $0.contains("Repository.") || $0.contains("database.read") || $0.contains("database.write") }
        #expect(offences.isEmpty, Comment(rawValue: "RPCDispatcher reads tables itself:\n" + offences.joined(separator: "\n")))
    }

    @Test func thePatternsFindSQLWhereThereIsSome() throws {
        // The check above must be able to fail: SharedStore's repositories are full of SQL.
        #expect(try Self.offences(under: "Sources/SharedStore/Database/Repositories").count > 10)
    }
}
