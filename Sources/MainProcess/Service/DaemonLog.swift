import Foundation

/// The daemon's log: one line per event on stderr (the journal under systemd) with a
/// syslog level prefix. Ids and counts only; never message text or key material.
///
/// ```swift
/// DaemonLog.info("ready: 3 conversations")
/// ```
enum DaemonLog {
    static func info(_ line: String) { emit("<6>", line) }
    static func warning(_ line: String) { emit("<4>", line) }
    static func error(_ line: String) { emit("<3>", line) }

    private static func emit(_ level: String, _ line: String) {
        FileHandle.standardError.write(Data("\(level)sotto[\(getpid())]: \(line)\n".utf8))
    }
}
