import Glibc

/// One line per event on stderr (the journal under systemd), prefixed with a syslog level
/// so journald files it right. Callers pass codes and ids, never plaintext or key material.
///
/// ```swift
/// WorkerLog.info("push ok message=\(id) seq=\(seq)")
/// ```
enum WorkerLog {
    static func info(_ line: String) { emit("<6>", line) }
    static func warning(_ line: String) { emit("<4>", line) }
    static func error(_ line: String) { emit("<3>", line) }

    private static func emit(_ level: String, _ line: String) {
        let text = level + "sotto-notify[\(getpid())]: " + line + "\n"
        var bytes = Array(text.utf8)
        _ = write(STDERR_FILENO, &bytes, bytes.count)
    }
}
