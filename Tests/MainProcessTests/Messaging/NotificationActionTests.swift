import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import Testing
import TestSupport
@testable import SottoDaemon

/// Issue #22 item 4: clicking a desktop notification opens its conversation. The running
/// daemon posts what the real worker hands it on `notifications.sock`, so the click reaches a
/// process that is still there, on a real session bus with a real notification server that,
/// like dunst and KDE, tells only the poster (docs/adr/0046).
// 10 minutes: a full suite on 2 cores beside the stress and power-cut suites once kept one test of it past 2 (its own waits allow 120 s).
@Suite("Notification actions", .serialized, .timeLimit(.minutes(10)))
struct NotificationActionTests {
    /// A device whose `SOTTO_OPEN_COMMAND` appends its arguments to `opened`.
    struct Opener {
        let script: String
        let opened: String

        init(in directory: String) throws {
            script = directory + "/open.sh"
            opened = directory + "/opened"
            try "#!/bin/sh\necho \"$@\" >> '\(opened)'\n".write(toFile: script, atomically: true, encoding: .utf8)
            chmod(script, 0o755)
        }

        var lines: [String] {
            ((try? String(contentsOfFile: opened, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
    }

    static func waitForDesktopNotifications(_ device: Device) throws {
        try device.waitUntil("\(device.name)'s daemon posts notifications") {
            FileManager.default.fileExists(atPath: device.runtime.notificationsSocketPath)
        }
    }

    @Test("a message's notification has an open action; clicking it runs the open command with its conversation")
    func clickOpensTheConversation() async throws {
        try await onOwnThread { try self.clickSteps() }
    }

    private func clickSteps() throws {
        let server = try TestNotificationServer()
        let tmp = try TemporaryDirectory(prefix: "open")
        let opener = try Opener(in: tmp.path)
        let net = try Network(["alice", "bob"], environment: ["DBUS_SESSION_BUS_ADDRESS": server.address,
                                                             "SOTTO_OPEN_COMMAND": opener.script + " --conversation"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob])
        try Self.waitForDesktopNotifications(bob)

        _ = try alice.json(["send", trip, "dinner at 8"])
        var shown = try server.nextNotification()
        while !shown.body.hasSuffix("dinner at 8") { shown = try server.nextNotification() }  // e.g. alice's own "bob joined"
        #expect(shown.actions == ["default"], "posted by the daemon, with the action: \(shown)")
        #expect(shown.summary == "Trip", "\(shown)")

        // Another key, or an id the daemon never posted: nothing runs.
        #expect(try server.invoke(shown.id, key: "settings"))
        #expect(try server.invoke(shown.id))
        // Generous: under load the click travels D-Bus → daemon → a spawned shell; "never", not "slow".
        do {
            try bob.waitUntil("the open command ran", timeoutMs: 120_000) { !opener.lines.isEmpty }
        } catch {
            let said = bob.daemonLog.split(separator: "\n").filter { $0.contains("desktop notifications") }.joined(separator: "\n")
            throw Device.Failure(message: "\(error); bob's daemon said:\n\(said)")
        }
        #expect(opener.lines == ["--conversation \(trip)"], "exactly one run, for the click on 'default'")
        #expect(bob.daemonLog.contains("desktop notifications: a click opens conversation \(trip.prefix(8))"), "the daemon says what it ran")
    }

    @Test("with the daemon stopped, the worker posts the notification itself (no action), and again through the daemon once it is back")
    func workerPostsWhileTheDaemonIsDown() async throws {
        try await onOwnThread { try self.daemonDownSteps() }
    }

    private func daemonDownSteps() throws {
        let server = try TestNotificationServer()
        let net = try Network(["alice", "bob"], environment: ["DBUS_SESSION_BUS_ADDRESS": server.address,
                                                             "SOTTO_OPEN_COMMAND": "/bin/true"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob])
        bob.stopDaemon()
        #expect(!FileManager.default.fileExists(atPath: bob.runtime.notificationsSocketPath), "the socket goes with the daemon")

        _ = try alice.json(["send", trip, "while you were out"])
        var shown = try server.nextNotification()
        while !shown.body.hasSuffix("while you were out") { shown = try server.nextNotification() }
        #expect(shown.actions.isEmpty, "the worker's own post has no action nobody would hear: \(shown)")

        try bob.startDaemon()
        try Self.waitForDesktopNotifications(bob)
        _ = try alice.json(["send", trip, "welcome back"])
        shown = try server.nextNotification()
        while !shown.body.hasSuffix("welcome back") { shown = try server.nextNotification() }
        #expect(shown.actions == ["default"])
    }

    @Test("garbage on notifications.sock is dropped and the daemon goes on posting")
    func garbageDatagramsAreDropped() async throws {
        try await onOwnThread { try self.garbageSteps() }
    }

    private func garbageSteps() throws {
        let server = try TestNotificationServer()
        let tmp = try TemporaryDirectory(prefix: "nd")
        let bob = try Device.start("bob", in: tmp.path, environment: ["DBUS_SESSION_BUS_ADDRESS": server.address,
                                                                     "SOTTO_OPEN_COMMAND": "/bin/true"])
        defer { bob.stop() }
        try Self.waitForDesktopNotifications(bob)
        let socket = bob.runtime.notificationsSocketPath
        let id = String(repeating: "ab", count: 16)
        let garbage: [[UInt8]] = [
            [], [0], Array("not json".utf8), Array("[]".utf8), Array("{}".utf8),
            Array(#"{"conversationId":"xyz","summary":"s","body":"b"}"#.utf8),
            Array(#"{"conversationId":"\#(id.uppercased())","summary":"s","body":"b"}"#.utf8),
            Array(#"{"conversationId":"\#(id)","summary":1,"body":"b"}"#.utf8),
            Array(#"{"conversationId":"\#(id)","summary":"s"}"#.utf8),
            Array(repeating: UInt8(ascii: "{"), count: 10_000),
            Array(#"{"conversationId":"\#(id)","summary":"s","body":"\#(String(repeating: "x", count: NotificationDatagram.maxBytes))"}"#.utf8),
        ]
        for bytes in garbage where !bytes.isEmpty {
            #expect(UnixSocket.sendDatagram(bytes, to: socket))
        }
        #expect(UnixSocket.sendDatagram(NotificationDatagram(conversationId: id, summary: "after", body: "the garbage").encode(), to: socket))
        let shown = try server.nextNotification()
        #expect(shown.summary == "after" && shown.body == "the garbage", "the first one shown is the valid one: \(shown)")
        #expect(bob.daemonIsRunning)
        #expect(bob.daemonLog.contains("not a notification dropped"))
    }

    @Test("the datagram's parser takes exactly a lowercase 16-byte id and two strings")
    func datagramParser() {
        let id = String(repeating: "0f", count: 16)
        let valid = NotificationDatagram(conversationId: id, summary: "Trip", body: "Ann: hi ✈️")
        #expect(NotificationDatagram.parse(valid.encode()) == valid)
        #expect(NotificationDatagram.parse(Array(#"{"conversationId":"\#(id)","summary":"s","body":"b","extra":[1]}"#.utf8)) != nil)
        for text in ["", "{", "null", #"{"conversationId":"\#(id)","summary":"s","body":null}"#,
                     #"{"conversationId":"\#(id.dropLast())","summary":"s","body":"b"}"#] {
            #expect(NotificationDatagram.parse(Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test("the open command: the variable's words then the id; without it, a terminal running sotto watch where one exists")
    func openCommandArguments() {
        let id = String(repeating: "1a", count: 16)
        #expect(NotificationOpenCommand(environment: ["SOTTO_OPEN_COMMAND": "/usr/bin/my-ui  --open"]).arguments(for: id)
                == ["/usr/bin/my-ui", "--open", id])
        #expect(NotificationOpenCommand(environment: ["SOTTO_OPEN_COMMAND": "  "]).arguments(for: id) == nil)
        let fallback = NotificationOpenCommand(environment: [:], sottoPath: "/usr/bin/sotto").arguments(for: id)
        if FileManager.default.isExecutableFile(atPath: NotificationOpenCommand.terminal) {
            #expect(fallback == [NotificationOpenCommand.terminal, "-e", "/usr/bin/sotto", "watch", "--conversation", id])
        } else {
            #expect(fallback == nil)
        }
    }
}
