import Foundation

/// A private session bus (its own dbus-daemon) on which org.freedesktop.Notifications is
/// bus-activatable but the server it starts never takes the name: a Notify call waits, as
/// with a hung or slow notification server, until its caller's timeout.
///
/// ```swift
/// let bus = try StalledNotificationBus()
/// environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
/// ```
public final class StalledNotificationBus: @unchecked Sendable {
    public let daemon: ChildProcess
    public let address: String
    private let directory: TemporaryDirectory
    private let serverPidPath: String

    public init() throws {
        directory = try TemporaryDirectory(prefix: "sotto-bus")
        serverPidPath = directory.path + "/server.pid"
        let services = directory.path + "/services"
        try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
        try """
            [D-BUS Service]
            Name=org.freedesktop.Notifications
            Exec=/bin/sh -c 'echo $$ > \(serverPidPath); exec /bin/sleep 120'

            """.write(toFile: services + "/notifications.service", atomically: true, encoding: .utf8)
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:dir=\(directory.path)</listen>
              <servicedir>\(services)</servicedir>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>

            """.write(toFile: directory.path + "/bus.conf", atomically: true, encoding: .utf8)
        daemon = try ChildProcess.launch("/usr/bin/dbus-daemon", ["--config-file=\(directory.path)/bus.conf",
                                                                  "--nofork", "--print-address=1"])
        guard let line = daemon.readStdoutLine() else { throw PushClient.Failure(message: "dbus-daemon printed no address") }
        address = line
    }

    deinit { stop() }

    /// Ends the bus and the stalled server it started (each by its PID), removes its files.
    public func stop() {
        daemon.kill(SIGKILL)
        daemon.terminate()
        if let text = try? String(contentsOfFile: serverPidPath, encoding: .utf8),
           let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
            kill(pid, SIGKILL)
        }
        directory.remove()
    }
}
