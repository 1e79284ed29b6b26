import Foundation
import SottoWire
import Testing
import TestSupport

/// `sotto watch` on the library's `ChangeFeedSession` (docs/adr/0071): a daemon killed under
/// it and started again is followed through, every change printed once and none missing,
/// the outage said on stderr; while the daemon stays away, watch waits for it.
@Suite("sotto watch across a daemon restart", .serialized, .timeLimit(.minutes(6)))
struct WatchRestartTests {
    @Test("a SIGKILL of the daemon and a restart: every change in change_log printed exactly once, in order")
    func survivesAKilledDaemon() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob], name: "Trip")
        let environment = ProcessInfo.processInfo.environment.merging(alice.environment) { $1 }
        let watch = try LoggedProcess.launch(try builtExecutable("sotto"), ["watch", "--json", "--since", "0"], environment: environment)
        defer { watch.signal(SIGTERM); _ = watch.waitForExit() }

        _ = try bob.json(["send", trip, "before the crash"])
        #expect(watch.waitForLine(containing: "before the crash", timeout: 30), "\(watch.output.suffix(5))")

        alice.stopDaemon(signal: SIGKILL)
        #expect(watch.waitForLine(containing: "sotto: the daemon went away", timeout: 10), "\(watch.output.suffix(5))")
        // Bob's pushes reach alice's worker while her daemon is down: changes the feed has
        // not delivered yet, and the daemon that comes back has not seen.
        _ = try bob.json(["send", trip, "while down 1"])
        _ = try bob.json(["send", trip, "while down 2"])
        try alice.waitUntil("alice's worker stored both", timeoutMs: 60_000) {
            try alice.query("SELECT count(*) FROM message WHERE conversationId = ?", [.text(trip)])[0].int64(0) >= 3
        }
        #expect(watch.isRunning, "watch waits for the daemon instead of ending")

        try alice.startDaemon()
        #expect(watch.waitForLine(containing: "sotto: the daemon is back; going on after #", timeout: 30), "\(watch.output.suffix(5))")
        _ = try bob.json(["send", trip, "after the restart"])
        #expect(watch.waitForLine(containing: "after the restart", timeout: 60), "\(watch.output.suffix(5))")

        let changes = try watch.output.filter { $0.hasPrefix("{") }.map(jsonObject)
        let seqs = changes.compactMap { int64($0["seq"]) }
        let logged = try alice.query("SELECT seq FROM change_log WHERE seq <= ? ORDER BY seq", [.integer(seqs.last ?? 0)]).map { try $0.int64(0) }
        #expect(seqs == logged, "every change from #1 on, once, in order: printed \(seqs), logged \(logged)")
        for text in ["before the crash", "while down 1", "while down 2", "after the restart"] {
            #expect(changes.filter { $0["kind"] as? String == "messageInserted" && $0["text"] as? String == text }.count == 1, "\(text) once")
        }
        let notes = watch.output.filter { $0.hasPrefix("sotto: the daemon went away") }
        #expect(notes.count == 1, "one note per outage, not one per retry: \(notes)")
    }
}
