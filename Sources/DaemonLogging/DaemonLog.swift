import Foundation
import Logging

/// The daemon's log: swift-log's `Logger` on a `JournalLogHandler`, so one line per event on
/// stderr (the journal under systemd) with a syslog priority. Ids and counts only; never
/// message text or key material. `SOTTO_LOG_LEVEL=debug` also shows the service group's own
/// lines (which service starts, which is told to stop).
///
/// ```swift
/// DaemonLog.info("ready: 3 conversations")
/// DaemonLog.logger.warning("outbox busy", metadata: ["due": "64"])
/// ```
public enum DaemonLog {
    public static let logger = Logger(label: "sotto") { _ in
        JournalLogHandler(program: "sotto", logLevel: level(getenv("SOTTO_LOG_LEVEL").map { String(cString: $0) }))
    }

    public static func info(_ line: String) { logger.info("\(line)") }
    public static func warning(_ line: String) { logger.warning("\(line)") }
    public static func error(_ line: String) { logger.error("\(line)") }

    /// `SOTTO_LOG_LEVEL` (trace … critical); info when unset or unknown.
    public static func level(_ text: String?) -> Logger.Level {
        text.flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .info
    }
}
