import Foundation
import SharedStore
import SottoWire
import Testing
import TestSupport

/// Issue #34: a conversation open in a client (`sotto watch --conversation ID`) raises no
/// desktop notification on this device, whether the daemon or the worker posts; once the
/// client goes (killed included) they come back, and a daemon that crashed with a client
/// attached clears the state at its next start (docs/adr/0062). Real daemons, real workers,
/// a real notification server.
@Suite("An open conversation is quiet", .serialized, .timeLimit(.minutes(4)))
struct OpenConversationQuietTests {
    struct Setup {
        let net: Network
        let server: TestNotificationServer
        let bob: Device
        let alice: Device
        let trip: String
        let other: String
        var tripInbox: String
    }

    static func setUp() throws -> Setup {
        let server = try TestNotificationServer()
        let net = try Network(["bob", "alice"], environment: ["DBUS_SESSION_BUS_ADDRESS": server.address,
                                                             "SOTTO_OPEN_COMMAND": "/bin/true"])
        let bob = net["bob"], alice = net["alice"]
        let trip = try net.conversation(creator: bob, joiners: [alice], name: "Trip")
        let other = try net.conversation(creator: bob, joiners: [alice], name: "Other")
        let tripInbox = try require(try alice.conversation(trip)?["inboxId"] as? String, "inboxId")
        return Setup(net: net, server: server, bob: bob, alice: alice, trip: trip, other: other, tripInbox: tripInbox)
    }

    static func openInClient(_ device: Device) throws -> [String: Any] {
        try device.json(["status"])["openInClient"] as? [String: Any] ?? [:]
    }

    static func isOpenColumn(_ device: Device, _ conversation: String) throws -> Int64 {
        try device.query("SELECT isOpen FROM conversation_local_state WHERE conversationId = ?", [.text(conversation)])[0].int64(0)
    }

    /// Reads notifications until one ends with `suffix`; returns it and the bodies shown before it.
    static func notifications(_ server: TestNotificationServer, until suffix: String) throws
        -> (last: TestNotificationServer.Notification, before: [String]) {
        var before: [String] = []
        var shown = try server.nextNotification()
        while !shown.body.hasSuffix(suffix) {
            before.append(shown.body)
            shown = try server.nextNotification()
        }
        return (shown, before)
    }

    /// Alice watches Trip: two messages to Trip notify nothing, one to Other notifies; the
    /// watch killed, the next message to Trip notifies. `postedByDaemon`: who must have posted.
    static func quietWhileOpen(_ s: Setup, round: String, postedByDaemon: Bool) throws {
        let watch = try LoggedProcess.launch(try builtExecutable("sotto"), ["watch", "--conversation", s.trip],
                                             environment: ProcessInfo.processInfo.environment.merging(s.alice.environment) { $1 })
        try s.alice.waitUntil("Trip open in alice's watch") { try openInClient(s.alice)[s.tripInbox] != nil }
        #expect(try isOpenColumn(s.alice, s.trip) == 1, "the worker's copy of the open state")

        for n in 1...2 { _ = try s.bob.json(["send", s.trip, "\(round) open \(n)"]) }
        try s.alice.waitUntil("alice stores both") { hasText(s.alice, s.trip, "\(round) open 1") && hasText(s.alice, s.trip, "\(round) open 2") }
        _ = try s.bob.json(["send", s.other, "\(round) elsewhere"])
        let elsewhere = try notifications(s.server, until: "\(round) elsewhere")
        #expect(elsewhere.last.summary == "Other")
        #expect(elsewhere.last.actions == (postedByDaemon ? ["default"] : []), "\(elsewhere.last)")
        #expect(!elsewhere.before.contains { $0.contains("\(round) open") }, "nothing for the open conversation: \(elsewhere.before)")

        // The client dies: its connection closes, the conversation is closed, notifications come back.
        watch.signal(SIGKILL)
        _ = watch.waitForExit()
        try s.alice.waitUntil("Trip closed") { try openInClient(s.alice)[s.tripInbox] == nil }
        #expect(try isOpenColumn(s.alice, s.trip) == 0)
        _ = try s.bob.json(["send", s.trip, "\(round) closed again"])
        let closed = try notifications(s.server, until: "\(round) closed again")
        #expect(closed.last.summary == "Trip")
        #expect(!closed.before.contains { $0.contains("\(round) open") }, "\(closed.before)")
    }

    @Test("while sotto watch --conversation has it open: no notification for it, from the daemon or the worker; one again after the watch dies")
    func openConversationRaisesNoNotification() async throws {
        try await onOwnThread { try self.openSteps() }
    }

    private func openSteps() throws {
        let s = try Self.setUp()
        try s.alice.waitUntil("alice's daemon posts notifications") {
            FileManager.default.fileExists(atPath: s.alice.runtime.notificationsSocketPath)
        }
        try Self.quietWhileOpen(s, round: "daemon", postedByDaemon: true)

        // A daemon without a session bus posts nothing: the workers post, and read the open state in the file.
        s.alice.stopDaemon()
        try s.alice.startDaemon(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"])
        #expect(!FileManager.default.fileExists(atPath: s.alice.runtime.notificationsSocketPath))
        try Self.quietWhileOpen(s, round: "worker", postedByDaemon: false)
    }

    @Test("a daemon killed while a client has a conversation open: the next start clears it, and the conversation notifies again")
    func crashLeavesNothingSilenced() async throws {
        try await onOwnThread { try self.crashSteps() }
    }

    private func crashSteps() throws {
        let s = try Self.setUp()
        let watch = try LoggedProcess.launch(try builtExecutable("sotto"), ["watch", "--conversation", s.trip],
                                             environment: ProcessInfo.processInfo.environment.merging(s.alice.environment) { $1 })
        try s.alice.waitUntil("Trip open in alice's watch") { try Self.openInClient(s.alice)[s.tripInbox] != nil }
        s.alice.stopDaemon(signal: SIGKILL)
        // `sotto watch` would reconnect to the next daemon (docs/adr/0071): this client
        // closes with the crash, so the next start finds the conversation left open.
        #expect(watch.waitForLine(containing: "the daemon went away", timeout: 10))
        watch.signal(SIGKILL)
        _ = watch.waitForExit()
        #expect(try Self.isOpenColumn(s.alice, s.trip) == 1, "what the crash left")

        try s.alice.startDaemon()
        #expect(try Self.isOpenColumn(s.alice, s.trip) == 0, "cleared before the daemon answers")
        #expect(s.alice.daemonLog.contains("1 conversation(s) the last run left open in a client: notified again"))
        _ = try s.bob.json(["send", s.trip, "after the crash"])
        let shown = try Self.notifications(s.server, until: "after the crash")
        #expect(shown.last.summary == "Trip")
    }
}
