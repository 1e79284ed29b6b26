import Foundation

/// What the daemon itself last said about `sotto.service`, for `sotto install` to print when
/// the unit did not become active (or is active but waiting): the daemon's last `STATUS=`
/// (systemd keeps it as the unit's `StatusText` after the process exits, until the next
/// start), else its last start-up line in the user's journal, else how the process ended.
///
/// ```swift
/// if let reason = DaemonReason.read() { print("the daemon says: \(reason)") }
/// ```
enum DaemonReason {
    static let unit = "sotto.service"

    // MARK: - Reading it

    /// The daemon's own words, or nil when systemd and the journal have none.
    static func read() -> String? {
        if let status = statusText() { return status }
        if let line = lastJournalFailure() { return line }
        return exitSummary()
    }

    /// The unit's `StatusText`: what the daemon last sent with `STATUS=`.
    static func statusText() -> String? {
        let text = Systemctl.run(["show", "-p", "StatusText", "--value", unit]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// The daemon's `STATUS=` when it is up but waiting for the master key, else nil.
    static func waiting() -> String? {
        guard let status = statusText(), status.hasPrefix("waiting for ") else { return nil }
        return status
    }

    // MARK: - Fallbacks

    /// The last `start-up failed` or `stopped after a failure` line the daemon wrote, when the
    /// user may read their journal (a persistent one; a volatile one is often root's only).
    private static func lastJournalFailure() -> String? {
        let result = run("/usr/bin/journalctl", ["--user", "-u", unit, "-n", "50", "-o", "cat", "--no-pager"])
        return result?.split(separator: "\n").last {
            $0.contains("start-up failed") || $0.contains("stopped after a failure")
        }.map(String.init)
    }

    /// "the process exited with status 78 (exit-code)" from `ExecMainStatus` and `Result`.
    private static func exitSummary() -> String? {
        let show = Systemctl.run(["show", "-p", "ExecMainStatus", "-p", "Result", unit]).stdout
        var values: [String: String] = [:]
        for line in show.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        guard let status = values["ExecMainStatus"], status != "0" else { return nil }
        return "the daemon exited with status \(status)" + (values["Result"].map { " (\($0))" } ?? "")
    }

    private static func run(_ path: String, _ arguments: [String]) -> String? {
        guard FileManager.default.isExecutableFile(atPath: path) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }
}
