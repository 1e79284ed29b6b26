import Logging
import SottoWire

/// A swift-log handler that writes each event as one `LogLine`: `<N>text` under journald
/// (journald reads `<N>` as the syslog priority and adds `sotto[PID]:` itself), else
/// `<N>sotto[PID]: text`. Metadata follows the text as ` key=value`, sorted by key. What
/// goes in a line is the caller's: ids and counts only, never message text or key material.
///
/// ```swift
/// let logger = Logger(label: "sotto") { _ in JournalLogHandler(program: "sotto") }
/// logger.info("ready", metadata: ["awake": "3"])   // "<6>sotto[812]: ready awake=3"
/// ```
struct JournalLogHandler: LogHandler {
    let program: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(program: String, logLevel: Logger.Level = .info) {
        self.program = program
        self.logLevel = logLevel
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { $1 } }
        if let extra = event.metadata { all.merge(extra) { $1 } }
        LogLine.write(Self.priority(event.level), program: program, Self.text(event.message.description, metadata: all))
    }

    // MARK: Formatting

    /// swift-log's seven levels on syslog's priorities (sd-daemon.h).
    static func priority(_ level: Logger.Level) -> LogLine.Level {
        switch level {
        case .trace, .debug: return .debug
        case .info: return .info
        case .notice: return .notice
        case .warning: return .warning
        case .error: return .error
        case .critical: return .critical
        }
    }

    static func text(_ message: String, metadata: Logger.Metadata) -> String {
        guard !metadata.isEmpty else { return message }
        return message + metadata.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
    }
}
