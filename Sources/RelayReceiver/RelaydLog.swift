import SottoWire

/// sotto-relayd's log lines (stderr, journald priorities). Never a payload, a key or a
/// password: mailboxes, sequence numbers, the worker's error codes and the relay's status.
///
/// ```swift
/// RelaydLog.info("relay connected: nats://127.0.0.1:4222")
/// ```
enum RelaydLog {
    static func info(_ text: String) { LogLine.write(.info, program: "sotto-relayd", text) }
    static func warning(_ text: String) { LogLine.write(.warning, program: "sotto-relayd", text) }
    static func error(_ text: String) { LogLine.write(.error, program: "sotto-relayd", text) }
}
