import ControlProtocol
import Foundation
import Glibc
import SottoClient
import SottoWire
import Testing
import TestSupport

/// Issue #34 part 2: `sotto chat` in a real terminal (tmux) against real daemons and
/// workers. What a person would see: bob's message appears on alice's screen; what alice
/// types and sends with Enter reaches bob's device; a hostile title escape shows as text and
/// leaves the pane's title alone; resize reflows; Ctrl-C and SIGTERM give the terminal back.
@Suite("sotto chat in a terminal", .serialized, .timeLimit(.minutes(6)),
       .enabled(if: ChatTerminal.isAvailable, "needs tmux (make deps installs it)"))
struct ChatTerminalTests {
    static func openInClient(_ device: Device) throws -> [String: Any] {
        try device.json(["status"])["openInClient"] as? [String: Any] ?? [:]
    }

    /// What the timeline pane shows: each body row right of the list's edge.
    static func timelinePane(_ screen: String) -> String {
        screen.split(separator: "\n", omittingEmptySubsequences: false)
            .compactMap { row in row.firstIndex(of: "│").map { String(row[row.index(after: $0)...]) } }.joined(separator: "\n")
    }

    /// The column (in characters) of the list's right edge on the first body row.
    static func separatorColumn(_ screen: String) -> Int? {
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count > 2 else { return nil }
        return lines[1].firstIndex(of: "│").map { lines[1].distance(from: lines[1].startIndex, to: $0) }
    }

    @Test("a conversation between two devices, typed and read on the screen")
    func conversationOnScreen() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob], name: "Trip")
        let tripInbox = try require(try alice.conversation(trip)?["inboxId"] as? String, "inboxId")
        let terminal = try ChatTerminal.start(columns: 80, rows: 24, environment: alice.environment)
        defer { terminal.stop() }

        // The test can see a title change: the shell sets one, tmux shows it.
        try terminal.typeLine("printf '\\033]0;probe-title\\007'")
        try terminal.waitForValue("#{pane_title}", "probe-title")

        try terminal.typeLine("\(try builtExecutable("sotto")) chat \(trip.prefix(8))")
        try terminal.waitForScreen("the chat's frame") { $0.contains("Sotto · Trip") && $0.contains("Ctrl-C quit") }
        try terminal.waitForValue("#{alternate_on}", "1")
        try alice.waitUntil("Trip open in alice's client") { try Self.openInClient(alice)[tripInbox] != nil }

        // Bob's message appears on alice's screen.
        _ = try bob.json(["send", trip, "hello from bob"])
        try terminal.waitForScreen("bob's message") { $0.contains("bob: hello from bob") }

        // What alice types reaches bob's device.
        try terminal.type("hi bob, typed in the chat")
        try terminal.waitForScreen("the composer") { $0.contains("> hi bob, typed in the chat") }
        try terminal.keys("Enter")
        try bob.waitUntil("bob's device has it") { hasText(bob, trip, "hi bob, typed in the chat") }
        try terminal.waitForScreen("alice's own line, delivered") { $0.contains("me: hi bob, typed in the chat (delivered)") }

        // A hostile text is shown, not obeyed.
        _ = try bob.json(["send", trip, "evil\u{1b}]0;pwned-title\u{07} \u{1b}[2Jgone? \u{1b}[31mred"])
        let hostile = try terminal.waitForScreen("the hostile message") { $0.contains("gone?") }
        #expect(try terminal.value("#{pane_title}") == "probe-title", "the title was not changed")
        #expect(hostile.contains("evil␛]0;pwned-title␇ ␛[2Jgone? ␛[31mred"), "shown, one character per control")
        #expect(hostile.contains("bob: hello from bob"), "the screen was not cleared")

        // The daemon dies underneath: the app says so, stays usable, and resumes when it is back.
        alice.stopDaemon(signal: SIGKILL)
        try terminal.waitForScreen("the app says the daemon is gone") { $0.contains("daemon unreachable") }
        try alice.startDaemon()
        _ = try bob.json(["send", trip, "after the crash"])
        try terminal.waitForScreen("resumed after the restart") { $0.contains("bob: after the crash") && $0.contains("Ctrl-C quit") }
        try alice.waitUntil("Trip open again") { try Self.openInClient(alice)[tripInbox] != nil }

        // Resize reflows: the list's edge moves with the width (80: 26 columns, 120: 30).
        #expect(Self.separatorColumn(try terminal.screen()) == 26)
        try terminal.resize(columns: 120, rows: 40)
        let wide = try terminal.waitForScreen("a 120×40 frame") { Self.separatorColumn($0) == 30 }
        #expect(wide.split(separator: "\n", omittingEmptySubsequences: false).count >= 40)
        #expect(wide.contains("bob: hello from bob"))

        // Ctrl-C: the terminal as it was, a shell that echoes and runs commands.
        try terminal.keys("C-c")
        try terminal.waitForValue("#{alternate_on}", "0")
        try terminal.typeLine("echo restored-$((40+2))")
        try terminal.waitForScreen("the shell answers") { $0.contains("restored-42") }
        try Self.expectBracketedPasteOff(terminal)
        try alice.waitUntil("Trip no longer open") { try Self.openInClient(alice)[tripInbox] == nil }
    }

    /// The shell gets a paste as typed text: bracketed paste was turned off on the way out
    /// (left on, the shell would read ESC[200~ before the command and not run it).
    static func expectBracketedPasteOff(_ terminal: ChatTerminal) throws {
        try terminal.paste("echo pasted-$((2+3))\n")
        try terminal.waitForScreen("the pasted command runs") { $0.contains("\npasted-5") }
        #expect(!(try terminal.screen().contains("200~")))
    }

    @Test("a multi-line paste goes into the composer, is not sent, and Enter sends it as one message")
    func bracketedPaste() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob], name: "Trip")
        let terminal = try ChatTerminal.start(columns: 100, rows: 24, environment: alice.environment)
        defer { terminal.stop() }
        try terminal.typeLine("\(try builtExecutable("sotto")) chat \(trip)")
        try terminal.waitForScreen("the chat's frame") { $0.contains("Sotto · Trip") && $0.contains("Ctrl-C quit") }

        try terminal.type("see: ")
        try terminal.paste("func f() {\n\treturn 1\n}\u{7}")
        let pasted = try terminal.waitForScreen("the paste in the composer") { $0.contains("pasted 3 lines") }
        #expect(pasted.contains("> see: func f() {␊    return 1␊}"), "the lines in the composer, a tab as spaces, BEL dropped:\n\(pasted)")
        #expect(!pasted.contains("me: see"), "nothing sent")
        #expect(!alice.messages(trip).contains { ($0["text"] as? String ?? "").contains("func f()") }, "nothing sent")

        try terminal.keys("Enter")
        let sent = "see: func f() {\n    return 1\n}"
        try bob.waitUntil("bob has it as one message with its line breaks") { hasText(bob, trip, sent) }
        #expect(!bob.messages(trip).contains { $0["text"] as? String == "see: func f() {" }, "not sent at the first line break")
        let screen = try terminal.waitForScreen("alice's message on its lines") { $0.contains("me: see: func f() {") && $0.contains("(delivered)") }
        #expect(screen.contains("      return 1"), "its second line, under the first:\n\(screen)")

        try terminal.keys("C-c")
        try terminal.waitForValue("#{alternate_on}", "0")
        try Self.expectBracketedPasteOff(terminal)
    }

    @Test("reply to and react to a selected message")
    func replyAndReact() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob], name: "Trip")
        let terminal = try ChatTerminal.start(columns: 80, rows: 24, environment: alice.environment)
        defer { terminal.stop() }
        try terminal.typeLine("\(try builtExecutable("sotto")) chat \(trip)")
        _ = try bob.json(["send", trip, "pick me"])
        try terminal.waitForScreen("bob's message") { $0.contains("bob: pick me") }
        let picked = try require(message(bob, trip, text: "pick me")?["id"] as? String, "id")

        try terminal.keys("C-p")
        try terminal.waitForScreen("the newest message selected") { $0.contains("▸") && $0.contains("bob: pick me") && $0.contains("Ctrl-R reply") }
        try terminal.keys("C-r")
        try terminal.waitForScreen("the reply prompt") { $0.contains("reply \(picked.prefix(8))>") }
        try terminal.type("my answer")
        try terminal.keys("Enter")
        try bob.waitUntil("bob has the reply, quoting") { message(bob, trip, text: "my answer")?["referenceId"] as? String == picked }
        try terminal.waitForScreen("the quote and the reply") { $0.contains("↪ bob: pick me") && $0.contains("me: my answer (delivered)") }
        let answer = try require(message(alice, trip, text: "my answer")?["id"] as? String, "id")

        try terminal.keys("C-p")
        try terminal.waitForScreen("my answer selected") { $0.contains("▸") && $0.contains("Ctrl-T react") }
        try terminal.type("🎉")
        try terminal.keys("C-t")
        try bob.waitUntil("bob has the reaction") {
            bob.messages(trip).contains { $0["contentType"] as? String == "xmtp.org/reaction:1.0" && $0["referenceId"] as? String == answer
                                          && ($0["text"] as? String ?? "").contains("🎉") }
        }
        try terminal.waitForScreen("the reaction under the message") { $0.contains("🎉 me") }
    }

    @Test("wide, combining, emoji and right-to-left text keep every row in its columns")
    func wideTextKeepsTheLayout() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob], name: "Trip")
        let terminal = try ChatTerminal.start(columns: 80, rows: 24, environment: alice.environment)
        defer { terminal.stop() }
        try terminal.typeLine("\(try builtExecutable("sotto")) chat \(trip)")
        let text = "日本語 e\u{301}te 🎉👍 שלום עולם end"
        _ = try bob.json(["send", trip, text])
        let screen = try terminal.waitForScreen("the text") { $0.contains("bob: " + text) }
        let rows = screen.split(separator: "\n", omittingEmptySubsequences: false)
        // The column of each body row's separator, as Python's unicodedata counts cells (East
        // Asian width W/F: 2, combining and format: 0): an oracle apart from the renderer's own.
        let oracle = """
            import sys, unicodedata
            for row in sys.stdin.read().split("\\n"):
                head = row.split("│")[0]
                print(sum(0 if unicodedata.category(c) in ("Mn", "Me", "Cf") else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in head))
            """
        let body = rows.dropFirst().prefix(21).joined(separator: "\n")
        let measured = try ChildProcess.run("/usr/bin/python3", ["-c", oracle], stdin: body)
        let separators = measured.stdout.split(separator: "\n").map { Int($0) }
        #expect(separators.count == 21 && separators.allSatisfy { $0 == 26 }, "\(separators)\n\(body)")
        #expect(rows.contains { $0.hasSuffix("bob: " + text) }, "on one row, nothing after it")
        #expect(rows.contains { $0.contains("Ctrl-C quit") })
    }

    @Test("PageUp scrolls back through a long conversation, fetching older pages from the daemon")
    func pageUpThroughHistory() throws {
        let tmp = try TemporaryDirectory(prefix: "cp")
        let alice = try Device.start("alice", in: tmp.path)
        defer { alice.stop() }
        let id = try require(try alice.json(["new", "--name", "Long"])["conversationId"] as? String, "conversationId")
        let client = try ControlClient.connect(path: alice.runtime.controlSocketPath)
        for n in 1...150 { _ = try client.call(SendMessageParams(conversation: id, text: "line \(n)")) }
        let terminal = try ChatTerminal.start(columns: 80, rows: 24, environment: alice.environment)
        defer { terminal.stop() }
        try terminal.typeLine("\(try builtExecutable("sotto")) chat \(id)")
        try terminal.waitForScreen("the latest") { $0.contains("me: line 150 (") }
        // 150 messages are three pages of 50: the first only is loaded until PageUp reaches its top.
        let deadline = WallClock.nowMs() + 60_000
        while !(try terminal.screen().contains("me: line 1 (")) {
            if WallClock.nowMs() > deadline {
                throw Device.Failure(message: "line 1 never came into view:\n\(try terminal.screen())")
            }
            try terminal.keys("PPage")
            usleep(100_000)   // pace the keys; the loop ends on what the screen shows
        }
        #expect(!(try terminal.screen().contains("line 150 (")), "scrolled away from the bottom")
        for _ in 0..<20 { try terminal.keys("NPage") }
        try terminal.waitForScreen("back at the bottom") { $0.contains("me: line 150 (") }
    }

    @Test("paging up past the timeline's window shows each page next to the last: no message skipped or shown twice in a row when the newest pages are dropped")
    func pageUpPastTheWindowIsContinuous() throws {
        let tmp = try TemporaryDirectory(prefix: "cw")
        let alice = try Device.start("alice", in: tmp.path)
        defer { alice.stop() }
        let id = try require(try alice.json(["new", "--name", "Long"])["conversationId"] as? String, "conversationId")
        let client = try ControlClient.connect(path: alice.runtime.controlSocketPath)
        // 700 one-line messages: 14 pages of 50, past the window of 500, so paging to the top
        // drops the newest pages under the view, which must not move what is on screen.
        for n in 1...700 { _ = try client.call(SendMessageParams(conversation: id, text: "line \(n)")) }
        let terminal = try ChatTerminal.start(columns: 80, rows: 24, environment: alice.environment)
        defer { terminal.stop() }
        try terminal.typeLine("\(try builtExecutable("sotto")) chat \(id)")
        func shownLines(_ screen: String) -> [Int] {
            Self.timelinePane(screen).split(separator: "\n").compactMap { row in
                row.firstRange(of: "me: line ").flatMap { Int(row[$0.upperBound...].prefix { $0.isNumber }) }
            }
        }
        var shown = shownLines(try terminal.waitForScreen("the latest") { $0.contains("me: line 700 (") })
        var pages = 0
        while shown.first != 1 {
            let before = shown
            try terminal.keys("PPage")
            shown = shownLines(try terminal.waitForScreen("the page above line \(before.first ?? 0)") { screen in
                let now = shownLines(screen)
                return !now.isEmpty && now != before && !screen.contains("loading older")
            })
            pages += 1
            let (newest, oldest) = (shown.last ?? 0, shown.first ?? 0)
            #expect(oldest < before.first ?? 0, "page \(pages) went up: \(before) → \(shown)")
            #expect(newest >= (before.first ?? 0) - 1 && newest <= before.last ?? 0,
                    "page \(pages) is next to the last one, nothing skipped: \(before) → \(shown)")
            #expect(shown == Array(oldest...newest), "one line per message, in order: \(shown)")
            if pages > 100 { Issue.record("line 1 never came into view"); break }
        }
        #expect(pages >= 700 / 19, "\(pages) page ups for 700 one-line messages")
    }

    @Test("paged far back, a new message shows as a count on the timeline, and End shows it")
    func newMessagesWhileScrolledBack() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob], name: "Trip")
        let client = try ControlClient.connect(path: alice.runtime.controlSocketPath)
        // 600 messages: past the timeline's window of 500, so paging up to the oldest drops
        // the newest pages (`hasNewer`).
        for n in 1...600 { _ = try client.call(SendMessageParams(conversation: trip, text: "line \(n)")) }
        let terminal = try ChatTerminal.start(columns: 80, rows: 24, environment: alice.environment)
        defer { terminal.stop() }
        try terminal.typeLine("\(try builtExecutable("sotto")) chat \(trip)")
        try terminal.waitForScreen("the latest") { $0.contains("me: line 600 (") }
        let deadline = WallClock.nowMs() + 120_000
        // The conversation's first message is the roster's ("Trip: 2 members").
        while !(try terminal.screen().contains("me: Trip: 2 members (")) {
            if WallClock.nowMs() > deadline { throw Device.Failure(message: "the first message never came into view:\n\(try terminal.screen())") }
            try terminal.keys("PPage")
            usleep(50_000)   // pace the keys; the loop ends on what the screen shows
        }
        #expect(!(try terminal.screen().contains("new message")), "nothing new yet")

        _ = try bob.json(["send", trip, "while you were away"])
        let away = try terminal.waitForScreen("the count of what came") { $0.contains("↓ 1 new message · End shows the latest") }
        #expect(away.contains("me: Trip: 2 members ("), "the view stayed where it was, above the count")
        #expect(!Self.timelinePane(away).contains("while you were away"), "not in the timeline (the list's preview has it)")
        _ = try bob.json(["send", trip, "and again"])
        try terminal.waitForScreen("two now") { $0.contains("↓ 2 new messages") }

        try terminal.keys("End")
        let latest = try terminal.waitForScreen("the latest, at the bottom") { $0.contains("bob: while you were away") && $0.contains("bob: and again") }
        #expect(!latest.contains("new message"), "in view: no count")
        #expect(Self.timelinePane(latest).contains("bob: and again"))
        #expect(!latest.contains("me: Trip: 2 members ("))
    }

    @Test("sotto chat ID refuses an unknown id, and says when no daemon runs, before taking the screen")
    func refusals() throws {
        let tmp = try TemporaryDirectory(prefix: "cr")
        let alice = try Device.start("alice", in: tmp.path)
        defer { alice.stop() }
        _ = try alice.json(["new", "--name", "One"])
        let unknown = try alice.cli(["chat", "ffffffffff"])
        #expect(unknown.status == 65 && unknown.stderr.contains("no conversation 'ffffffffff'"), "\(unknown)")
        let noDaemon = try alice.cli(["chat", "--runtime-dir", tmp.path + "/nowhere"])
        #expect(noDaemon.status == 69 && noDaemon.stderr.contains("not running"), "\(noDaemon)")
    }

    /// CPU ticks (user + system) a process has used, from /proc/PID/stat.
    static func cpuTicks(_ pid: Int32) throws -> Int64 {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
        return Int64(fields[11])! + Int64(fields[12])!   // utime, stime (fields 14 and 15)
    }

    @Test("NO_COLOR draws no attributes; idle, the app does not run; SIGTERM gives the terminal back")
    func noColorIdleAndSigterm() throws {
        let tmp = try TemporaryDirectory(prefix: "ct")
        let alice = try Device.start("alice", in: tmp.path)
        defer { alice.stop() }
        _ = try alice.json(["new", "--name", "Solo"])
        var environment = alice.environment
        environment["NO_COLOR"] = "1"
        let terminal = try ChatTerminal.start(columns: 80, rows: 24, environment: environment)
        defer { terminal.stop() }
        try terminal.typeLine("\(try builtExecutable("sotto")) chat")
        try terminal.waitForScreen("the chat's frame") { $0.contains("Sotto · Solo") && $0.contains("Ctrl-C quit") }
        try terminal.waitForValue("#{alternate_on}", "1")
        let styled = try terminal.tmux(["capture-pane", "-p", "-e", "-t", terminal.target])
        #expect(!styled.contains("\u{1b}["), "NO_COLOR: no SGR on the screen")

        let chat = try #require(try terminal.paneChildren().first)
        let before = try Self.cpuTicks(chat)
        usleep(10_000_000)   // a measurement window (issue #34: ≤ 1 tick in 10 s), not a wait for anything
        let used = try Self.cpuTicks(chat) - before
        #expect(used <= 1, "idle for 10 s the app used \(used) ticks: it must wait in poll, not loop")
        print("CHAT idle: \(used) CPU ticks in 10 s")

        kill(chat, SIGTERM)
        try terminal.waitForValue("#{alternate_on}", "0")
        try terminal.typeLine("echo back-$((1+1))")
        try terminal.waitForScreen("the shell answers") { $0.contains("back-2") }
        try Self.expectBracketedPasteOff(terminal)
    }
}
