import Foundation
import SottoWire

/// A private session bus (its own dbus-daemon) with a dbus-monitor watching every call to
/// org.freedesktop.Notifications: what real `sotto-notify` workers, given its `address` as
/// `DBUS_SESSION_BUS_ADDRESS`, post as desktop notifications. Nothing answers the calls (the
/// worker sends Notify without waiting for a reply), the monitor sees each one.
///
/// ```swift
/// let bus = try NotificationBusMonitor()
/// let bob = try Device.start("bob", in: tmp.path, environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
/// try bus.waitForNotify { $0.contains { $0.hasSuffix("hello") } }
/// ```
public final class NotificationBusMonitor: @unchecked Sendable {
    public let address: String
    private let daemon: ChildProcess
    private let monitor: ChildProcess
    /// With `stalledServer`: the notification server that never answers.
    private let stalled: StalledNotificationBus?
    /// Every Notify call seen so far: its string arguments (app name, icon, summary, body, hints).
    public private(set) var calls: [[String]] = []

    /// `stalledServer`: the bus has a notification server that takes calls and never answers
    /// (`StalledNotificationBus`); otherwise nothing owns the name.
    public init(stalledServer: Bool = false) throws {
        if stalledServer {
            let bus = try StalledNotificationBus()
            stalled = bus
            daemon = bus.daemon
            address = bus.address
        } else {
            stalled = nil
            daemon = try ChildProcess.launch("/usr/bin/dbus-daemon", ["--session", "--nofork", "--print-address=1"])
            guard let line = daemon.readStdoutLine() else { throw Device.Failure(message: "dbus-daemon printed no address") }
            address = line
        }
        // Line-buffered: dbus-monitor block-buffers a pipe otherwise.
        monitor = try ChildProcess.launch("/usr/bin/stdbuf", ["-oL", "/usr/bin/dbus-monitor", "--address", address,
                                                             "type='method_call',interface='org.freedesktop.Notifications'"])
        // dbus-monitor prints its NameAcquired signal only once BecomeMonitor returned.
        _ = monitor.waitForLine(containing: "NameAcquired")
    }

    deinit {
        monitor.kill(SIGKILL)
        daemon.kill(SIGKILL)
        monitor.terminate()
        daemon.terminate()
    }

    /// Reads what the monitor printed up to a marker call this sends now, adding each Notify
    /// call to `calls`; returns `calls`.
    @discardableResult
    public func readCalls() throws -> [[String]] {
        _ = try ChildProcess.run("/usr/bin/dbus-send", ["--print-reply", "--reply-timeout=200", "--address=\(address)",
            "--dest=org.freedesktop.Notifications", "/org/freedesktop/Notifications",
            "org.freedesktop.Notifications.GetCapabilities", "string:end-of-read"])
        var current: [String]?
        // A worker asks GetCapabilities too (with no argument): only ours ends the read.
        var capabilitiesCall = false
        while let line = monitor.readStdoutLine() {
            if line.hasPrefix("method call") {
                if let current { calls.append(current) }
                capabilitiesCall = line.contains("member=GetCapabilities")
                current = line.contains("member=Notify") ? [] : nil
            } else {
                // `string "x"`, or a hint value `variant string "x"`.
                var trimmed = Substring(line.trimmingCharacters(in: .whitespaces))
                if trimmed.hasPrefix("variant ") { trimmed = trimmed.dropFirst(8).drop { $0 == " " } }
                if capabilitiesCall, trimmed == "string \"end-of-read\"" { return calls }
                if trimmed.hasPrefix("string \"") { current?.append(String(trimmed.dropFirst(8).dropLast())) }
            }
        }
        return calls
    }

    /// Reads calls until `condition` holds for them, each read paced by the marker call's
    /// round trip on the bus; throws when `timeoutMs` passes first.
    public func waitForNotify(timeoutMs: Int64 = 20_000, _ condition: ([[String]]) -> Bool) throws {
        let deadline = WallClock.nowMs() + timeoutMs
        while !condition(try readCalls()) {
            if WallClock.nowMs() > deadline { throw Device.Failure(message: "no such notification; calls: \(calls)") }
        }
    }
}
