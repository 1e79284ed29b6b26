import CSystemd
import Foundation

/// The daemon's side of `Type=notify`: `READY=1`, `STATUS=…`, `WATCHDOG=1`, `STOPPING=1`.
/// Without `NOTIFY_SOCKET` (foreground runs, tests without a notify socket) every call is a
/// no-op, as `sd_notify` is.
///
/// ```swift
/// let notifier = SystemdNotifier()
/// notifier.ready(status: "3 inboxes awake")
/// if let interval = notifier.watchdogInterval { … ping every interval … }
/// ```
struct SystemdNotifier: Sendable {
    func ready(status: String) { send("READY=1\nSTATUS=\(Self.oneLine(status))") }
    func status(_ text: String) { send("STATUS=\(Self.oneLine(text))") }
    func watchdog() { send("WATCHDOG=1") }
    func stopping() { send("STOPPING=1\nSTATUS=stopping") }

    /// The reason the process is about to exit, as its last `STATUS=`: systemd keeps it as the
    /// unit's `StatusText` until the next start, where `sotto install` reads it. Waits (at most
    /// `timeoutMs`) until systemd has read it, or an exit racing it could lose it.
    func exiting(reason: String, timeoutMs: UInt64 = 2_000) {
        send("STATUS=\(Self.oneLine(reason))")
        _ = sd_notify_barrier(0, timeoutMs * 1_000)
    }

    /// Half of `WATCHDOG_USEC` when systemd asked for pings (systemd's recommendation), else nil.
    var watchdogInterval: Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(Int64(usec / 2))
    }

    private func send(_ state: String) {
        _ = sd_notify(0, state)
    }

    private static func oneLine(_ text: String) -> String {
        text.replacingOccurrences(of: "\n", with: " ")
    }
}
