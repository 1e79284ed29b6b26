import Foundation
import Testing

/// Issue #11: every SQL statement lives in SharedStore (what the worker runs) or DaemonStore
/// (what only the daemon runs, docs/adr/0043); every other module under Sources/ (issue #33:
/// each one found on disk, the worker's too) and the daemon benchmarks hold no SQL text and
/// no GRDB (docs/adr/0023). Reads the sources, so a new `conn.query("SELECT …")` there fails.
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

    /// The two modules that hold SQL (docs/adr/0043, 0065).
    static let storeModules: Set<String> = ["SharedStore", "DaemonStore"]

    /// Every module under Sources/ but the two stores, read from the file system so a module
    /// added later is checked without being listed here, and the daemon benchmarks.
    static var checkedFolders: [String] {
        let sources = packageRoot.appendingPathComponent("Sources")
        let modules = (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? []
        return modules.filter { !storeModules.contains($0) }.sorted().map { "Sources/\($0)" }
            + ["Benchmarks/DaemonBench", "Benchmarks/DaemonE2EBench"]
    }

    @Test(arguments: checkedFolders)
    func noSQLOutsideSharedStore(folder: String) throws {
        let offences = try Self.offences(under: folder)
        #expect(offences.isEmpty, Comment(rawValue: "SQL outside SharedStore:\n" + offences.joined(separator: "\n")))
    }

    /// Issue #33: the list above is every module, the worker's and the client's among them.
    @Test func everyModuleButTheStoresIsChecked() {
        let folders = Set(Self.checkedFolders)
        for module in ["NotificationWorker", "SottoDaemon", "SottoClient", "MainProcess", "SottoWire", "SottoCrypto",
                       "ControlProtocol", "RelayTransport", "RelayReceiver"] {
            #expect(folders.contains("Sources/\(module)"), "Sources/\(module) is not checked")
        }
        #expect(folders.allSatisfy { !$0.hasSuffix("SharedStore") && !$0.hasSuffix("DaemonStore") })
    }

    /// Issue #33: a `*Repository` only reads; what writes is a writer (`*Writer`, or a type
    /// named for its one act, as `InboxDeletion`), so a write is found where writes are.
    @Test func repositoriesOnlyRead() throws {
        let write = try NSRegularExpression(pattern: #"\b(INSERT|UPDATE|DELETE|REPLACE)\b|\.run\(|ChangeLog\.append\("#)
        var offences: [String] = []
        for module in Self.storeModules.sorted() {
            let root = Self.packageRoot.appendingPathComponent("Sources/\(module)")
            guard let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in files where url.lastPathComponent.hasSuffix("Repository.swift") {
                let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                for (number, line) in lines.enumerated() where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                    let text = String(line)
                    if write.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil {
                        offences.append("\(module)/\(url.lastPathComponent):\(number + 1): \(text)")
                    }
                }
            }
        }
        #expect(offences.isEmpty, Comment(rawValue: "a repository writes:\n" + offences.joined(separator: "\n")))
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
