import Foundation
import SharedStore
import Testing
import TestSupport

/// Members are shown by their profile names, as a messenger shows them: the creator's own
/// name goes out in the membership, and `sotto read` and `sotto watch` print names, not
/// inbox-id prefixes.
@Suite("Messaging: sender names", .serialized)
struct SenderNamesTests {
    @Test("read and watch name the sender; the creator's profile name reaches the joiner")
    func namesNotIds() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try require(try alice.json(["new", "--name", "Trip", "--profile-name", "Alice"])["conversationId"] as? String)
        let code = try require(try alice.json(["invite", trip, "--expires", "1h"])["code"] as? String)
        _ = try bob.json(["join", code, "--profile-name", "Bob"])
        try bob.waitUntil("bob active") { try bob.conversation(trip)?["state"] as? String == "active" }

        let aliceInbox = try require(try alice.conversation(trip)?["inboxId"] as? String)
        #expect(try bob.profileName(conversation: trip, inboxId: aliceInbox) == "Alice")

        // --since 0: replays what it missed before subscribing, so no race with the sends.
        let watch = try LoggedProcess.launch(try builtExecutable("sotto"), ["watch", "--since", "0"],
                                             environment: ProcessInfo.processInfo.environment.merging(alice.environment) { $1 })
        defer { watch.signal(SIGTERM); _ = watch.waitForExit() }

        _ = try alice.json(["send", trip, "hi bob"])
        _ = try bob.json(["send", trip, "hi alice"])
        try bob.waitUntil("bob shows alice's message") { hasText(bob, trip, "hi bob") }
        try alice.waitUntil("alice shows bob's message") { hasText(alice, trip, "hi alice") }

        #expect(try bob.cli(["read", trip]).stdout.contains("Alice: hi bob"))
        #expect(try alice.cli(["read", trip]).stdout.contains("Bob: hi alice"))
        #expect(message(alice, trip, text: "hi alice")?["senderName"] as? String == "Bob")
        #expect(watch.waitForLine(containing: "Bob: hi alice", timeout: 10), "\(watch.output.suffix(5))")
    }
}
