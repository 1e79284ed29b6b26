import GRDBSQLite
import SharedStore
import SottoWire

/// SQLite's `PRAGMA quick_check` (every b-tree page of every table and index: page headers,
/// cell pointers, free lists; not index-vs-table content) under a time budget, so the
/// daemon can check its file at start-up without a large database delaying READY. The
/// budget is enforced with a progress handler that interrupts the check; an interrupted
/// check is `.incomplete`, never `.damaged` (docs/adr/0018 has the cost per MB).
///
/// ```swift
/// switch IntegrityCheck.quick(conn, budgetMs: 2_000) {
/// case .sound: break
/// case .damaged(let cause): DaemonLog.error(DatabaseDamage.message(group: group, cause: cause))
/// case .incomplete(let ms): DaemonLog.warning("quick check stopped after \(ms) ms")
/// }
/// ```
public enum IntegrityCheck {
    public enum Outcome: Equatable, Sendable {
        case sound
        /// What SQLite reported (at most a few of its lines, or the error it raised).
        case damaged(String)
        /// The budget ran out (or the check could not run) after this many milliseconds.
        case incomplete(elapsedMs: Int64, reason: String)
    }

    /// Runs the check on `conn`; `budgetMs: nil` runs it to the end.
    public static func quick(_ conn: SQLiteConnection, budgetMs: Int64?) -> Outcome {
        let start = MonotonicClock.nowNs()
        let deadline = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
        defer { deadline.deallocate() }
        if let budgetMs {
            deadline.pointee = start + UInt64(max(0, budgetMs)) * 1_000_000
            // Every 1000 virtual-machine steps (~50 µs): the overrun past the budget is negligible.
            sqlite3_progress_handler(conn.handle, 1000, { context in
                guard let context else { return 0 }
                return MonotonicClock.nowNs() > context.assumingMemoryBound(to: UInt64.self).pointee ? 1 : 0
            }, deadline)
        }
        defer { if budgetMs != nil { sqlite3_progress_handler(conn.handle, 0, nil, nil) } }
        let elapsed = { Int64((MonotonicClock.nowNs() - start) / 1_000_000) }
        do {
            let statement = try conn.prepare("PRAGMA quick_check(5)")
            var lines: [String] = []
            while try statement.step() { lines.append(statement.string(0)) }
            if lines == ["ok"] { return .sound }
            return .damaged("quick_check: " + lines.joined(separator: "; "))
        } catch .corrupt(let code, let message, _) {
            return .damaged("\(SQLiteResultCode.name(code)): \(message)")
        } catch .sqlite(let code, _, _) where SQLiteResultCode.primary(code) == SQLiteResultCode.interrupt {  // out of budget
            return .incomplete(elapsedMs: elapsed(), reason: "time budget of \(budgetMs ?? 0) ms used up")
        } catch {
            return .incomplete(elapsedMs: elapsed(), reason: error.description)
        }
    }
}
