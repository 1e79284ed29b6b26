import Foundation
import SharedStore
import SottoWire
import Testing
import TestSupport

/// Issue #34 part 3, desktop notifications: a hostile member's text reaches a notification
/// server that reads markup (as GNOME Shell, KDE and dunst do) escaped, with no live link or
/// image, and a plain server as plain text; neither gets a control character. The server
/// is asked what it reads once, by the daemon and by each worker (docs/adr/0062).
@Suite("Notification markup", .serialized, .timeLimit(.minutes(3)))
struct NotificationMarkupTests {
    static let hostile = "\u{1B}]0;pwned\u{07}\u{9B}2J \u{202E}evil <a href=\"https://evil.example/x\">click</a> "
        + "<img src=\"file:///etc/passwd\"/> it's \"quoted\" & more\r\u{1B}[K forged"
    static let escapedLink = "&lt;a href=&quot;https://evil.example/x&quot;&gt;click&lt;/a&gt;"
    static let escapedImage = "&lt;img src=&quot;file:///etc/passwd&quot;/&gt;"

    /// Code points a server or a terminal would act on, or that reorder text.
    static func controls(_ text: String) -> [UInt32] {
        text.unicodeScalars.map(\.value).filter {
            $0 < 0x20 || (0x7F...0x9F).contains($0) || [0x061C, 0x200E, 0x200F].contains($0)
                || (0x202A...0x202E).contains($0) || (0x2066...0x2069).contains($0)
        }
    }

    /// The next notification `wanted` picks (others, e.g. a join, skipped).
    static func next(_ server: TestNotificationServer,
                     where wanted: (TestNotificationServer.Notification) -> Bool) throws -> TestNotificationServer.Notification {
        var shown = try server.nextNotification()
        while !wanted(shown) { shown = try server.nextNotification() }
        return shown
    }

    static func waitForDesktopNotifications(_ device: Device) throws {
        try device.waitUntil("\(device.name)'s daemon posts notifications") {
            FileManager.default.fileExists(atPath: device.runtime.notificationsSocketPath)
        }
    }

    @Test("a markup server gets the body escaped from the daemon and from the worker, each asking GetCapabilities once; the summary stays plain and inert")
    func markupServerGetsEscapedBodies() async throws {
        try await onOwnThread { try self.markupSteps() }
    }

    private func markupSteps() throws {
        let server = try TestNotificationServer(capabilities: TestNotificationServer.markupCapabilities)
        let net = try Network(["mallory", "alice"], environment: ["DBUS_SESSION_BUS_ADDRESS": server.address,
                                                                 "SOTTO_OPEN_COMMAND": "/bin/true"])
        let mallory = net["mallory"], alice = net["alice"]
        let trip = try net.conversation(creator: mallory, joiners: [alice], name: "Trip \u{202E}gnp.exe")
        try Self.waitForDesktopNotifications(alice)

        _ = try mallory.json(["send", trip, Self.hostile])
        let shown = try Self.next(server) { $0.body.contains("forged") }
        #expect(shown.actions == ["default"], "posted by alice's daemon: \(shown)")
        #expect(shown.body.contains(Self.escapedLink) && shown.body.contains(Self.escapedImage), "\(shown.body)")
        #expect(shown.body.contains("it&#39;s &quot;quoted&quot; &amp; more␍␛[K forged"), "\(shown.body)")
        #expect(!shown.body.contains("<a href") && !shown.body.contains("<img"), "\(shown.body)")
        #expect(shown.body.contains("␛]0;pwned␇&lt;U+009B&gt;2J &lt;U+202E&gt;evil"), "\(shown.body)")
        #expect(Self.controls(shown.body).isEmpty && Self.controls(shown.summary).isEmpty, "\(shown)")
        #expect(shown.summary == "Trip <U+202E>gnp.exe", "the summary is plain text, never markup: \(shown.summary)")

        _ = try mallory.json(["send", trip, "<b>bold</b> second"])
        let second = try Self.next(server) { $0.body.contains("second") }
        #expect(second.body.hasSuffix("&lt;b&gt;bold&lt;/b&gt; second"), "\(second.body)")
        #expect(server.capabilityAsks.filter { $0 == shown.sender }.count == 1, "the daemon asked once: \(server.capabilityAsks)")

        // The daemon stopped: the worker posts, and asks first.
        alice.stopDaemon()
        _ = try mallory.json(["send", trip, "<a href=\"https://evil.example/y\">worker</a>"])
        let byWorker = try Self.next(server) { $0.body.contains("evil.example/y") }
        #expect(byWorker.actions.isEmpty, "posted by the worker: \(byWorker)")
        #expect(byWorker.body.hasSuffix("&lt;a href=&quot;https://evil.example/y&quot;&gt;worker&lt;/a&gt;"), "\(byWorker.body)")
        #expect(server.capabilityAsks.filter { $0 == byWorker.sender }.count == 1, "the worker asked once: \(server.capabilityAsks)")
    }

    @Test("a server without body-markup gets the text as it is, inert, from the daemon and from the worker")
    func plainServerGetsPlainText() async throws {
        try await onOwnThread { try self.plainSteps() }
    }

    private func plainSteps() throws {
        let server = try TestNotificationServer()
        let net = try Network(["mallory", "alice"], environment: ["DBUS_SESSION_BUS_ADDRESS": server.address,
                                                                 "SOTTO_OPEN_COMMAND": "/bin/true"])
        let mallory = net["mallory"], alice = net["alice"]
        let trip = try net.conversation(creator: mallory, joiners: [alice])
        try Self.waitForDesktopNotifications(alice)

        _ = try mallory.json(["send", trip, Self.hostile])
        let shown = try Self.next(server) { $0.body.contains("forged") }
        #expect(shown.actions == ["default"])
        #expect(shown.body.contains("<a href=\"https://evil.example/x\">click</a> <img src=\"file:///etc/passwd\"/> it's \"quoted\" & more"),
                "\(shown.body)")
        #expect(shown.body.contains("␛]0;pwned␇<U+009B>2J <U+202E>evil"), "\(shown.body)")
        #expect(Self.controls(shown.body).isEmpty, "\(shown.body)")

        alice.stopDaemon()
        _ = try mallory.json(["send", trip, "\u{1B}[2J<i>by the worker</i>"])
        let byWorker = try Self.next(server) { $0.body.contains("by the worker") }
        #expect(byWorker.actions.isEmpty)
        #expect(byWorker.body.hasSuffix("␛[2J<i>by the worker</i>"), "\(byWorker.body)")
    }
}
