import Foundation
import SottoWire

/// A private session bus (its own dbus-daemon) with a real notification server on it
/// (`sotto-test-notification-server`, Tests/NotificationServer): it answers Notify with ids,
/// reports every notification, and on `invoke` sends ActionInvoked to the poster only, as
/// dunst and KDE do. Reads block until the server prints: no sleeps. `capabilities` is what
/// it answers GetCapabilities (`markupCapabilities`: what GNOME Shell, KDE and dunst say);
/// summaries and bodies are the exact strings the D-Bus call carried.
///
/// ```swift
/// let server = try TestNotificationServer(capabilities: TestNotificationServer.markupCapabilities)
/// let bob = try Device.start("bob", in: tmp.path, environment: ["DBUS_SESSION_BUS_ADDRESS": server.address])
/// let shown = try server.nextNotification()        // shown.actions == ["default"]
/// #expect(try server.invoke(shown.id))
/// ```
public final class TestNotificationServer: @unchecked Sendable {
    public struct Notification: Sendable, Equatable {
        public let id: UInt32
        /// The unique bus name of the peer that posted it.
        public let sender: String
        /// The action keys, "default" first when it has one.
        public let actions: [String]
        public let summary: String
        public let body: String
    }

    /// What the server answers GetCapabilities by default: no markup.
    public static let plainCapabilities = ["body", "actions", "persistence"]
    /// A server that renders markup and links in a body.
    public static let markupCapabilities = ["body", "body-markup", "body-hyperlinks", "actions", "persistence"]

    public let address: String
    private let bus: ChildProcess
    private let server: ChildProcess
    /// Notifications read while waiting for an `invoke` answer.
    private var unread: [Notification] = []
    /// The unique bus names that asked GetCapabilities, in order, as read so far.
    public private(set) var capabilityAsks: [String] = []

    public init(capabilities: [String] = TestNotificationServer.plainCapabilities) throws {
        bus = try ChildProcess.launch("/usr/bin/dbus-daemon", ["--session", "--nofork", "--print-address=1"])
        guard let line = bus.readStdoutLine() else { throw Device.Failure(message: "dbus-daemon printed no address") }
        address = line
        server = try ChildProcess.launch(try builtExecutable("sotto-test-notification-server"),
                                         ["--capabilities", capabilities.joined(separator: ",")],
                                         environment: ["DBUS_SESSION_BUS_ADDRESS": address])
        guard server.waitForLine(containing: "ready") != nil else {
            throw Device.Failure(message: "the notification server did not start: \(server.readStderrLine() ?? "")")
        }
    }

    deinit {
        server.kill(SIGKILL)
        bus.kill(SIGKILL)
        server.terminate()
        bus.terminate()
    }

    /// The next notification shown, in the order they were posted; throws when none comes
    /// within `timeoutMs`.
    public func nextNotification(timeoutMs: Int32 = 60_000) throws -> Notification {
        if !unread.isEmpty { return unread.removeFirst() }
        while let line = server.readStdoutLine(timeoutMs: timeoutMs) {
            if let notification = Self.parse(line) { return notification }
            noteCapabilityAsk(line)
        }
        throw Device.Failure(message: "no notification within \(timeoutMs) ms, or the notification server ended")
    }

    private func noteCapabilityAsk(_ line: String) {
        if line.hasPrefix("capabilities ") { capabilityAsks.append(String(line.dropFirst("capabilities ".count))) }
    }

    /// Clicks `id` (its action `key`): true when the server sent ActionInvoked to its poster,
    /// false when it knows no such notification.
    public func invoke(_ id: UInt32, key: String = "default") throws -> Bool {
        server.write("invoke \(id) \(key)\n")
        while let line = server.readStdoutLine() {
            if let notification = Self.parse(line) { unread.append(notification); continue }
            noteCapabilityAsk(line)
            if line == "invoked \(id)" { return true }
            if line == "unknown \(id)" || line == "failed \(id)" { return false }
        }
        throw Device.Failure(message: "the notification server ended")
    }

    /// `notify ID SENDER ACTIONS<TAB>SUMMARY<TAB>BODY`, summary and body in hex.
    static func parse(_ line: String) -> Notification? {
        let fields = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
        let head = fields.first?.split(separator: " ") ?? []
        guard fields.count == 3, head.count == 4, head[0] == "notify", let id = UInt32(head[1]),
              let summary = Hex.decode(String(fields[1])), let body = Hex.decode(String(fields[2])) else { return nil }
        let actions = head[3] == "-" ? [] : head[3].split(separator: ",").map(String.init)
        return Notification(id: id, sender: String(head[2]), actions: actions,
                            summary: String(decoding: summary, as: UTF8.self), body: String(decoding: body, as: UTF8.self))
    }
}
