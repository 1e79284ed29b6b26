import Foundation
import Glibc
import SottoWire
import Testing
import TestSupport

/// Issue #34 part 2: while a conversation is open in `sotto chat`, it raises no desktop
/// notification on this device; another conversation still does. Moving to another
/// conversation in the app moves the quiet with it, and quitting (or a SIGKILL of the app)
/// brings the notifications back. A person's view: a real terminal (tmux) running the app,
/// real daemons and workers, a real notification server that counts what it is asked to show.
@Suite("sotto chat keeps the open conversation quiet", .serialized, .timeLimit(.minutes(5)),
       .enabled(if: ChatTerminal.isAvailable, "needs tmux (make deps installs it)"))
struct ChatQuietTests {
    typealias Setup = OpenConversationQuietTests.Setup

    /// Bob sends `quiet` to the open conversation and then `loud` to the other one; the
    /// notification for `loud` must come with none for `quiet` before it, and the app must
    /// have drawn `quiet` (so it was stored and shown, only not notified).
    static func quietThenLoud(_ s: Setup, _ terminal: ChatTerminal, open: String, elsewhere: String,
                              elsewhereName: String, round: String) throws {
        _ = try s.bob.json(["send", open, "\(round) quiet"])
        try terminal.waitForScreen("\(round): the open conversation's message drawn") { $0.contains(": \(round) quiet") }
        _ = try s.bob.json(["send", elsewhere, "\(round) loud"])
        let (shown, before) = try OpenConversationQuietTests.notifications(s.server, until: "\(round) loud")
        #expect(shown.summary == elsewhereName)
        #expect(!before.contains { $0.contains("\(round) quiet") }, "nothing for the open conversation: \(before)")
    }

    @Test("open in the app: no notification for it, one for another; moving moves the quiet; quitting or a SIGKILL brings them back")
    func openConversationIsQuiet() throws {
        let s = try OpenConversationQuietTests.setUp()
        let otherInbox = try require(try s.alice.conversation(s.other)?["inboxId"] as? String, "inboxId")
        let terminal = try ChatTerminal.start(columns: 80, rows: 24, environment: s.alice.environment)
        defer { terminal.stop() }
        try terminal.typeLine("\(try builtExecutable("sotto")) chat \(s.trip)")
        try terminal.waitForScreen("Trip open") { $0.contains("Sotto · Trip") && $0.contains("Ctrl-C quit") }
        try s.alice.waitUntil("Trip open in alice's app") { try OpenConversationQuietTests.openInClient(s.alice)[s.tripInbox] != nil }
        try Self.quietThenLoud(s, terminal, open: s.trip, elsewhere: s.other, elsewhereName: "Other", round: "first")

        // Move to Other in the list (the list is `sotto ls`'s order): Other goes quiet, Trip notifies.
        let order = try s.alice.conversations().compactMap { $0["id"] as? String }
        let tripIndex = try require(order.firstIndex(of: s.trip), "Trip listed")
        let otherIndex = try require(order.firstIndex(of: s.other), "Other listed")
        try terminal.keys(otherIndex > tripIndex ? "Down" : "Up")
        try terminal.waitForScreen("Other open") { $0.contains("Sotto · Other") }
        try s.alice.waitUntil("Other open, Trip closed") {
            let open = try OpenConversationQuietTests.openInClient(s.alice)
            return open[otherInbox] != nil && open[s.tripInbox] == nil
        }
        try Self.quietThenLoud(s, terminal, open: s.other, elsewhere: s.trip, elsewhereName: "Trip", round: "moved")

        // Ctrl-C: the app closes it; the next message in Other notifies.
        try terminal.keys("C-c")
        try terminal.waitForValue("#{alternate_on}", "0")
        try s.alice.waitUntil("nothing open after quitting") { try OpenConversationQuietTests.openInClient(s.alice).isEmpty }
        _ = try s.bob.json(["send", s.other, "after quitting"])
        #expect(try OpenConversationQuietTests.notifications(s.server, until: "after quitting").last.summary == "Other")

        // A SIGKILL of the app (no goodbye to the daemon) brings them back too.
        try terminal.typeLine("\(try builtExecutable("sotto")) chat \(s.trip)")
        try terminal.waitForScreen("Trip open again") { $0.contains("Sotto · Trip") && $0.contains("Ctrl-C quit") }
        try s.alice.waitUntil("Trip open again in alice's app") { try OpenConversationQuietTests.openInClient(s.alice)[s.tripInbox] != nil }
        for pid in try terminal.paneChildren() { kill(pid, SIGKILL) }
        try s.alice.waitUntil("Trip closed after the kill") { try OpenConversationQuietTests.openInClient(s.alice)[s.tripInbox] == nil }
        _ = try s.bob.json(["send", s.trip, "after the kill"])
        #expect(try OpenConversationQuietTests.notifications(s.server, until: "after the kill").last.summary == "Trip")
    }
}
