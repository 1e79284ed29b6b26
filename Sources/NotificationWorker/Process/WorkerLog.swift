import SottoWire

/// One line per event on stderr (the journal under systemd), with a syslog priority so
/// journald files it right (`LogLine`). Callers pass codes and ids, never plaintext or key
/// material.
///
/// ```swift
/// WorkerLog.info("push ok message=\(id) seq=\(seq)")
/// ```
enum WorkerLog {
    static func info(_ line: String) { LogLine.write(.info, program: "sotto-notify", line) }
    static func warning(_ line: String) { LogLine.write(.warning, program: "sotto-notify", line) }
    static func error(_ line: String) { LogLine.write(.error, program: "sotto-notify", line) }
}
