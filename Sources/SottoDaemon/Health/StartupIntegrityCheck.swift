import DaemonEngine
import DaemonLogging
import DaemonStore
import Foundation
import SharedStore
import SottoCrypto
import SottoWire

/// The daemon's look at its database before it opens the pool: SQLite's quick check under a
/// time budget (`SOTTO_QUICK_CHECK_MS`, default 2000 ms; 0 skips it), or to the end when
/// the file is already marked damaged (then a pass clears the marker: the user repaired it).
/// Damage is recorded in the marker, so workers stop acking into the file, and thrown as a
/// ``DatabaseDamaged`` whose text names the file, the cause and the remedy (docs/adr/0018).
///
/// ```swift
/// try StartupIntegrityCheck.run(group: group, environment: env)   // before DaemonDatabase(...)
/// ```
enum StartupIntegrityCheck {
    static let budgetVariable = "SOTTO_QUICK_CHECK_MS"
    static let defaultBudgetMs: Int64 = 2_000

    static func run(group: GroupDirectory, environment: [String: String]) throws {
        let budget = environment[budgetVariable].flatMap(Int64.init) ?? defaultBudgetMs
        let marker = DamageMarker(databasePath: group.databasePath)
        let marked = marker.isPresent
        guard FileManager.default.fileExists(atPath: group.databasePath) else {
            if marked { marker.clear() }  // a fresh start after the file was moved away
            return
        }
        if budget <= 0 && !marked { return }
        let outcome: IntegrityCheck.Outcome
        do {
            let conn = try SQLiteConnection.open(path: group.databasePath, profile: .worker)
            outcome = IntegrityCheck.quick(conn, budgetMs: marked ? nil : budget)
            if case .damaged(let cause) = outcome { throw damaged(group, marker, describe(cause, on: conn)) }
        } catch let error as StoreError {
            guard case .corrupt(let code, let message, _) = error else { throw error }
            throw damaged(group, marker, "\(SQLiteResultCode.name(code)): \(message)")
        }
        switch outcome {
        case .sound:
            if marked {
                marker.clear()
                DaemonLog.info("the database at \(group.databasePath) passed a full check: damage marker removed")
            }
        case .damaged:
            break  // thrown above
        case .incomplete(let elapsedMs, let reason):
            if marked { throw damaged(group, marker, marker.reason() ?? "marked damaged; the check did not finish: \(reason)") }
            DaemonLog.warning("quick check of \(group.databasePath) stopped after \(elapsedMs) ms (\(reason)); "
                              + "the rest of the file is checked when SQLite reads it")
        }
    }

    private static func damaged(_ group: GroupDirectory, _ marker: DamageMarker, _ cause: String) -> DatabaseDamaged {
        marker.mark(cause)
        return DatabaseDamaged(message: DatabaseDamage.message(group: group, cause: cause))
    }

    /// quick_check names b-trees by root page ("Tree 7 page 12 …"): add the table's name.
    private static func describe(_ cause: String, on conn: SQLiteConnection) -> String {
        var names: [String] = []
        var rest = Substring(cause)
        while let range = rest.range(of: "Tree ") {
            let digits = rest[range.upperBound...].prefix(while: \.isNumber)
            if let root = Int64(digits), let name = IntegrityCheck.object(rootPage: root, on: conn), !names.contains(name) {
                names.append(name)
            }
            rest = rest[range.upperBound...]
        }
        if names.isEmpty { names = IntegrityCheck.damagedTables(on: conn).map { "table \($0)" } }
        guard !names.isEmpty else { return cause }
        return "SQLITE_CORRUPT in " + names.joined(separator: ", ") + "; " + cause
    }
}

/// The database failed its check: `message` is the whole story for the log and the user.
struct DatabaseDamaged: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
