import Foundation
import SharedStore
import Testing
import TestSupport

/// `sotto mute ID` / `--unmute` (the `muteConversation` method): the flag is this device's
/// own, `sotto ls` shows it, and the real worker posts no desktop notification for a muted
/// conversation's messages on a real session bus, and does again once unmuted.
@Suite("Mute", .serialized)
struct MuteTests {
    @Test("a muted conversation's pushes are stored and notify nothing; unmuted, they notify again")
    func mutedPushesDoNotNotify() throws {
        let bus = try NotificationBusMonitor()
        let net = try Network(["alice", "bob"], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob])
        func body(_ text: String) -> ([String]) -> Bool { { $0.count > 3 && $0[3].hasSuffix(text) } }

        _ = try alice.json(["send", trip, "before mute"])
        try bob.waitUntil("bob stores 'before mute'") { hasText(bob, trip, "before mute") }
        try bus.waitForNotify { $0.contains(where: body("before mute")) }

        let muted = try bob.json(["mute", String(trip.prefix(8))])
        #expect(muted["conversationId"] as? String == trip && muted["muted"] as? Bool == true)
        #expect(try bob.conversation(trip)?["muted"] as? Bool == true)
        #expect(try alice.conversation(trip)?["muted"] as? Bool == false, "muting is this device's own")
        #expect(try bob.cli(["ls"]).stdout.contains("muted]"))
        _ = try alice.json(["send", trip, "while muted"])
        try bob.waitUntil("bob stores 'while muted'") { hasText(bob, trip, "while muted") }

        let unmuted = try bob.json(["mute", trip, "--unmute"])
        #expect(unmuted["muted"] as? Bool == false)
        #expect(try bob.conversation(trip)?["muted"] as? Bool == false)
        _ = try alice.json(["send", trip, "after unmute"])
        try bob.waitUntil("bob stores 'after unmute'") { hasText(bob, trip, "after unmute") }
        try bus.waitForNotify { $0.contains(where: body("after unmute")) }

        // Stored (bob read it above), never shown.
        #expect(!bus.calls.contains(where: body("while muted")), "\(bus.calls)")
    }

    @Test("garbage params and unknown conversations: a clear JSON-RPC error, and nothing changes")
    func garbageChangesNothing() throws {
        let home = try DaemonHome()
        let daemon = try DaemonProcess.start(home: home)
        defer { _ = try? daemon.stop() }
        let id = try #require(try daemon.result("newConversation", ["name": "Quiet"])["conversationId"] as? String)
        let before = try #require(int64(try daemon.result("status")["lastSeq"]))

        let cases: [([String: Any], Int64, String)] = [
            (["conversation": id], -32602, "'muted' must be a boolean"),
            (["conversation": id, "muted": "yes"], -32602, "'muted' must be a boolean"),
            (["conversation": id, "muted": 1], -32602, "'muted' must be a boolean"),
            (["conversation": "", "muted": true], -32602, "'conversation' must be a non-empty string"),
            (["conversation": ["x"], "muted": true], -32602, "'conversation' must be a non-empty string"),
            (["conversation": "ffffffffff", "muted": true], -32001, "no conversation matches 'ffffffffff'"),
        ]
        for (params, code, message) in cases {
            let error = try #require(try daemon.call("muteConversation", params)["error"] as? [String: Any], "\(params)")
            #expect(int64(error["code"]) == code, "\(params)")
            #expect((error["message"] as? String)?.contains(message) == true, "\(params): \(error)")
        }
        #expect(int64(try daemon.result("status")["lastSeq"]) == before, "a refused request wrote nothing")
        let listed = try daemon.result("listConversations")["conversations"] as? [[String: Any]]
        #expect(listed?.first?["muted"] as? Bool == false)

        // The CLI says the same, with exit 65.
        let unknown = try runCLI(["mute", "ffffffffff"], home: home)
        #expect(unknown.status == 65 && unknown.stderr.contains("no conversation matches"))
        let ok = try runCLI(["mute", String(id.prefix(8))], home: home)
        #expect(ok.status == 0 && ok.stdout.contains("muted \(id.prefix(12))"), "\(ok)")
        #expect((try daemon.result("listConversations")["conversations"] as? [[String: Any]])?.first?["muted"] as? Bool == true)
    }
}
