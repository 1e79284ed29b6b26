import SharedStore

/// The daemon's log: one line per event on stderr (the journal under systemd) with a syslog
/// priority (`LogLine`). Ids and counts only; never message text or key material.
///
/// ```swift
/// DaemonLog.info("ready: 3 conversations")
/// ```
enum DaemonLog {
    static func info(_ line: String) { LogLine.write(.info, program: "sotto", line) }
    static func warning(_ line: String) { LogLine.write(.warning, program: "sotto", line) }
    static func error(_ line: String) { LogLine.write(.error, program: "sotto", line) }
}
