import DaemonEngine
import DaemonStore
import Foundation
import SharedStore
import SottoCrypto
import SottoWire

/// `sotto repair`'s work: move the damaged file aside (with its WAL), create a fresh, migrated
/// database, and copy every row SQLite can still read into it. Each table is read forward
/// until the first damaged page, then backward from its end until a damaged page, so one
/// garbage leaf page costs only the rows on it. AUTOINCREMENT counters keep their old high
/// points, so a change-feed seq is never reused. The damage marker is removed at the end.
///
/// ```swift
/// let report = try DatabaseSalvage.run(group: group)   // the daemon must be stopped
/// print(report.summary)
/// ```
public enum DatabaseSalvage {
    public struct Report {
        let keptAt: String
        let tables: [RowSalvage.TableResult]
        /// The rebuilt file's version when the damaged one was older than this build's.
        let olderVersion: Int64?

        public var summary: String {
            var lines = tables.map { result in
                "\(result.table): \(result.rows) rows kept" + (result.damaged.map { "; damaged pages skipped (\($0))" } ?? "")
            }
            if let olderVersion {
                lines.append("rebuilt at schema version \(olderVersion), as the damaged file was; starting sotto migrates it to \(Schema.currentVersion)")
                if olderVersion < ContentSealingMigration.version {
                    lines.append("the damaged file holds its content in clear, as its version did: delete it once sotto shows everything")
                }
            }
            lines.append("the damaged file is kept at \(keptAt); start sotto again")
            return lines.joined(separator: "\n")
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    public static func run(group: GroupDirectory) throws -> Report {
        let path = group.databasePath
        guard FileManager.default.fileExists(atPath: path) else { throw Failure(description: "no database at \(path): nothing to repair") }
        let kept = group.path + "/damaged-\(WallClock.nowMs()).sqlite"
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            guard rename(path + suffix, kept + suffix) == 0 else {
                throw Failure(description: "cannot move \(path + suffix) aside: errno \(errno)")
            }
        }
        // An older file is rebuilt at its own version: the daemon's next start migrates it
        // with its keys, so content from before v10 is sealed there (docs/adr/0052), not
        // copied in clear into cells that must be sealed.
        let fresh = try SQLiteConnection.open(path: path, profile: .worker, create: true)
        let version = RowSalvage.schemaVersion(of: kept, on: fresh)
        try Migrator.migrate(fresh, upTo: version ?? Schema.currentVersion)
        let results: [RowSalvage.TableResult]
        do {
            results = try RowSalvage.copyReadableRows(from: kept, into: fresh)
        } catch .unreadableHeader(let error) {
            throw Failure(description: "the damaged file's header is unreadable (\(error)); restore \(path) from a backup (the damaged file is at \(kept))")
        } catch .store(let error) {
            throw error
        }
        DamageMarker(databasePath: path).clear()
        let atOlder = version.flatMap { $0 < Schema.currentVersion ? $0 : nil }
        return Report(keptAt: kept, tables: results, olderVersion: atOlder)
    }
}
