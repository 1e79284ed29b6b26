#if canImport(Glibc)
import Glibc
#endif

/// How both processes write a log line on stderr. Under journald (`JOURNAL_STREAM` names
/// stderr) a line is `<N>text`: journald takes `<N>` as the syslog priority (sd-daemon.h,
/// `SD_INFO` = `<6>`) and already shows `sotto[PID]:` itself. Elsewhere (a terminal, a test's
/// pipe) the program and PID are written too.
///
/// ```swift
/// let line = LogLine.format(.info, program: "sotto-notify", "push ok")  // "<6>push ok\n" under journald
/// ```
public enum LogLine {
    /// Syslog priorities as sd-daemon.h writes them.
    public enum Level: Int {
        case critical = 2, error = 3, warning = 4, notice = 5, info = 6, debug = 7
    }

    /// True when stderr is the stream journald reads (`JOURNAL_STREAM=DEV:INODE` matches
    /// fd 2), the check sd-daemon.h recommends: a child that inherits the variable but
    /// writes elsewhere keeps its prefix.
    public static let stderrIsJournal: Bool = isJournal(environmentValue: getenv("JOURNAL_STREAM").map { String(cString: $0) },
                                                        fd: 2)

    public static func isJournal(environmentValue: String?, fd: Int32) -> Bool {
        guard let value = environmentValue else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }

    /// One line whatever `text` holds: a peer's error text or a name in it cannot start a
    /// second journal entry (with a priority of its choosing) or reach a terminal that tails
    /// the log as escapes (`InertText.line`, docs/adr/0062).
    public static func format(_ level: Level, program: String, _ text: String, journal: Bool = stderrIsJournal) -> String {
        let inert = InertText.line(text)
        return journal ? "<\(level.rawValue)>\(inert)\n" : "<\(level.rawValue)>\(program)[\(getpid())]: \(inert)\n"
    }

    /// Writes one formatted line to stderr in a single write(2).
    public static func write(_ level: Level, program: String, _ text: String) {
        var bytes = Array(format(level, program: program, text).utf8)
        _ = Glibc.write(2, &bytes, bytes.count)
    }
}
