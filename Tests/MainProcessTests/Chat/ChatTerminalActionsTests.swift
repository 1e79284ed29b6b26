import ControlProtocol
import Foundation
import Glibc
import SottoClient
import SottoWire
import Testing
import TestSupport

/// Issue #34, what ADR 0064 left (docs/adr/0067): the actions from the app (`/new`,
/// `/invite`, `/join`, `/mute`, `/remove`, `/leave`, `/explode`), each checked on the screen
/// and at the daemons; a destructive one only after its name is typed, and a wrong or empty
/// confirmation destroys nothing; Ctrl-O composes in $EDITOR; Ctrl-F searches the whole
/// conversation, older pages included.
@Suite("sotto chat actions in a terminal", .serialized, .timeLimit(.minutes(8)),
       .enabled(if: ChatTerminal.isAvailable, "needs tmux (make deps installs it)"))
struct ChatTerminalActionsTests {
    static func chat(_ device: Device, _ conversation: String? = nil, environment extra: [String: String] = [:]) throws -> ChatTerminal {
        let terminal = try ChatTerminal.start(columns: 80, rows: 24, environment: device.environment.merging(extra) { $1 })
        try terminal.typeLine("\(try builtExecutable("sotto")) chat" + (conversation.map { " " + $0 } ?? ""))
        try terminal.waitForValue("#{alternate_on}", "1")
        return terminal
    }

    /// The status line (the screen's second last row).
    static func status(_ screen: String) -> String {
        let rows = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let filled = rows.count >= 24 ? Array(rows.prefix(24)) : rows
        return filled.count >= 2 ? filled[filled.count - 2] : ""
    }

    /// Types a command and Enter, then `answer` (a confirmation) and Enter.
    static func command(_ terminal: ChatTerminal, _ line: String, confirmingWith answer: String?, prompt: String) throws {
        try terminal.typeLine(line)
        try terminal.waitForScreen("the confirmation for \(line)") { $0.contains(prompt) }
        if let answer { try terminal.type(answer) }
        try terminal.keys("Enter")
    }

    @Test("/new, /invite, /join and /mute from the app, seen on the screen and at the daemons")
    func createInviteJoinMute() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let aliceChat = try Self.chat(alice)
        defer { aliceChat.stop() }
        try aliceChat.waitForScreen("an empty list") { $0.contains("no conversations") && $0.contains("/help") }

        // /help shows the commands over the panes; Esc closes it.
        try aliceChat.typeLine("/help")
        try aliceChat.waitForScreen("the help") { $0.contains("/explode [1h]") && $0.contains("Ctrl-O compose in $EDITOR") }
        try aliceChat.keys("Escape")
        try aliceChat.waitForScreen("the help closed") { !$0.contains("/explode [1h]") }

        try aliceChat.typeLine("/new Picnic")
        try aliceChat.waitForScreen("Picnic open") { $0.contains("Sotto · Picnic · 1 members") && $0.contains("created Picnic") }
        let picnic = try require(try alice.conversations().first { $0["name"] as? String == "Picnic" }?["id"] as? String, "Picnic's id")

        // /invite shows the code in whole rows; the rows in order are the code.
        try aliceChat.typeLine("/invite 1h")
        let shown = try aliceChat.waitForScreen("the invite") { $0.contains("Invite to Picnic") && $0.contains("sotto1:") }
        let rows = shown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let first = try require(rows.firstIndex { $0.hasPrefix("sotto1:") }, "the code's first row")
        let code = rows[first...].prefix { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.joined()
        #expect(code.count > 20 && !code.contains(" "), "\(code)")
        try aliceChat.keys("Escape")
        try aliceChat.waitForScreen("the invite closed, the conversation back") { !$0.contains("Invite to Picnic") && $0.contains("│") }

        // Bob pastes it into his own chat.
        let bobChat = try Self.chat(bob)
        defer { bobChat.stop() }
        try bobChat.waitForScreen("bob's empty list") { $0.contains("no conversations") }
        try bobChat.typeLine("/join " + code)
        try bobChat.waitForScreen("bob asked to join Picnic") { $0.contains("Sotto · Picnic") }
        try bob.waitUntil("bob active in Picnic") { try bob.conversation(picnic)?["state"] as? String == "active" }
        try alice.waitUntil("alice lists bob") { try alice.conversation(picnic)?["members"] as? Int == 2 }
        try aliceChat.waitForScreen("alice sees two members") { $0.contains("Sotto · Picnic · 2 members") }
        try bobChat.typeLine("hello from the joiner")
        try aliceChat.waitForScreen("bob's message on alice's screen") { $0.contains(": hello from the joiner") }

        // /mute and /unmute: on the screen, and at alice's daemon.
        try aliceChat.typeLine("/mute")
        try aliceChat.waitForScreen("muted") { Self.status($0).contains("muted Picnic") }
        try alice.waitUntil("muted at the daemon") { try alice.conversation(picnic)?["muted"] as? Bool == true }
        try aliceChat.waitForScreen("the list's muted flag") { $0.contains("Picnic") && $0.contains(" m│") }
        try aliceChat.typeLine("/unmute")
        try aliceChat.waitForScreen("unmuted") { Self.status($0).contains("unmuted Picnic") }
        try alice.waitUntil("unmuted at the daemon") { try alice.conversation(picnic)?["muted"] as? Bool == false }

        // An unknown command is refused, not sent; //text sends /text.
        try aliceChat.typeLine("/nuke")
        try aliceChat.waitForScreen("refused") { Self.status($0).contains("no command /nuke") }
        for _ in 0..<5 { try aliceChat.keys("BSpace") }
        try aliceChat.typeLine("//shrug")
        try bob.waitUntil("bob got /shrug") { hasText(bob, picnic, "/shrug") }
        #expect(!hasText(bob, picnic, "/nuke"))
    }

    @Test("/remove, /leave and /explode act only on the typed name; a wrong or empty answer destroys nothing")
    func destructiveActionsAreConfirmed() throws {
        let net = try Network(["alice", "bob", "carol"])
        let alice = net["alice"], bob = net["bob"], carol = net["carol"]
        let trip = try net.conversation(creator: alice, joiners: [bob, carol], name: "Trip")
        let boom = try net.conversation(creator: alice, joiners: [bob], name: "Boom")

        // Remove: a wrong name, Enter alone, Esc: nothing; then the name: carol's device deletes it.
        let aliceChat = try Self.chat(alice, trip)
        try aliceChat.waitForScreen("Trip open") { $0.contains("Sotto · Trip · 3 members") }
        try Self.command(aliceChat, "/remove carol", confirmingWith: "caro", prompt: "type carol to remove>")
        try aliceChat.waitForScreen("not confirmed") { Self.status($0).contains("not confirmed: nothing was changed") }
        try Self.command(aliceChat, "/remove carol", confirmingWith: nil, prompt: "Remove carol from Trip?")
        try aliceChat.waitForScreen("Enter alone: not confirmed") { Self.status($0).contains("not confirmed") }
        try aliceChat.typeLine("/remove carol")
        try aliceChat.waitForScreen("asked again") { $0.contains("type carol to remove>") }
        try aliceChat.type("carol")
        try aliceChat.keys("Escape")
        try aliceChat.waitForScreen("cancelled") { Self.status($0).contains("cancelled: nothing was changed") }
        #expect(try alice.conversation(trip)?["members"] as? Int == 3)
        #expect(try carol.conversation(trip) != nil, "carol still has Trip")
        try Self.command(aliceChat, "/remove carol", confirmingWith: "carol", prompt: "type carol to remove>")
        try aliceChat.waitForScreen("removed") { Self.status($0).contains("removed carol from Trip") }
        try carol.waitUntil("carol's device deleted Trip") { try isGone(carol, trip) }
        try alice.waitUntil("alice lists 2 members") { try alice.conversation(trip)?["members"] as? Int == 2 }
        try aliceChat.waitForScreen("the title says so") { $0.contains("Sotto · Trip · 2 members") }

        // Explode: the name in the wrong case, Enter alone: nothing; the name: gone everywhere.
        try aliceChat.keys("C-c")
        try aliceChat.waitForValue("#{alternate_on}", "0")
        try aliceChat.typeLine("\(try builtExecutable("sotto")) chat \(boom)")
        try aliceChat.waitForScreen("Boom open") { $0.contains("Sotto · Boom") }
        try Self.command(aliceChat, "/explode", confirmingWith: "boom", prompt: "type Boom to explode>")
        try aliceChat.waitForScreen("not confirmed") { Self.status($0).contains("not confirmed") }
        try Self.command(aliceChat, "/explode", confirmingWith: nil, prompt: "Explode Boom on every device now?")
        try aliceChat.waitForScreen("Enter alone: not confirmed") { Self.status($0).contains("not confirmed") }
        #expect(try alice.conversation(boom) != nil && bob.conversation(boom) != nil, "Boom is still on both devices")
        try Self.command(aliceChat, "/explode", confirmingWith: "Boom", prompt: "type Boom to explode>")
        try aliceChat.waitForScreen("exploded") { Self.status($0).contains("exploded Boom") }
        try alice.waitUntil("gone at alice's daemon") { try isGone(alice, boom) }
        try bob.waitUntil("gone on bob's device") { try isGone(bob, boom) }
        try aliceChat.waitForScreen("the list without Boom") { !$0.contains("Boom") || Self.status($0).contains("exploded Boom") }

        // Leave (bob, a member): the creator's /leave is refused with a word; bob's needs the name.
        try aliceChat.waitForScreen("Trip open again") { $0.contains("Sotto · Trip") }
        try aliceChat.typeLine("/leave")
        try aliceChat.waitForScreen("the creator explodes instead") { Self.status($0).contains("/explode deletes it") }
        aliceChat.stop()
        let bobChat = try Self.chat(bob, trip)
        defer { bobChat.stop() }
        try bobChat.waitForScreen("Trip open on bob's screen") { $0.contains("Sotto · Trip") }
        try Self.command(bobChat, "/leave", confirmingWith: "Tri", prompt: "type Trip to leave>")
        try bobChat.waitForScreen("not confirmed") { Self.status($0).contains("not confirmed") }
        #expect(try bob.conversation(trip) != nil)
        try Self.command(bobChat, "/leave", confirmingWith: "Trip", prompt: "type Trip to leave>")
        try bobChat.waitForScreen("left") { Self.status($0).contains("left Trip") }
        try bob.waitUntil("gone on bob's device") { try isGone(bob, trip) }
        try alice.waitUntil("alice lists 1 member") { try alice.conversation(trip)?["members"] as? Int == 1 }
    }

    @Test("a confirmation shows a hostile conversation name inert")
    func hostileNameInConfirmation() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        // A bidirectional override is allowed in a name (docs/adr/0062): it must show by name.
        let evil = try net.conversation(creator: alice, joiners: [bob], name: "Evil\u{202e}lived")
        let bobChat = try Self.chat(bob, evil)
        defer { bobChat.stop() }
        try Self.command(bobChat, "/leave", confirmingWith: "Evil", prompt: "type Evil<U+202E>lived to leave>")
        try bobChat.waitForScreen("not confirmed") { Self.status($0).contains("not confirmed") }
        #expect(try bob.conversation(evil) != nil)
        try Self.command(bobChat, "/leave", confirmingWith: "Evil<U+202E>lived", prompt: "Leave Evil<U+202E>lived?")
        try bob.waitUntil("bob left") { try isGone(bob, evil) }
    }

    @Test("Ctrl-O composes in $EDITOR on a private file; the text waits in the composer until Enter")
    func composeInEditor() throws {
        let tmp = try TemporaryDirectory(prefix: "ce")
        let alice = try Device.start("alice", in: tmp.path)
        defer { alice.stop() }
        let id = try require(try alice.json(["new", "--name", "Notes"])["conversationId"] as? String, "conversationId")
        let runtime = tmp.path + "/xdg"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let script = tmp.path + "/editor.sh"
        try """
            #!/bin/sh
            echo "$1" > \(tmp.path)/path
            stat -c %a "$1" > \(tmp.path)/mode
            cat "$1" > \(tmp.path)/before
            printf 'written in the editor\\nsecond line\\n' > "$1"
            """.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let terminal = try Self.chat(alice, id, environment: ["EDITOR": script, "XDG_RUNTIME_DIR": runtime])
        defer { terminal.stop() }
        try terminal.waitForScreen("Notes open") { $0.contains("Sotto · Notes") }
        try terminal.type("draft")
        try terminal.waitForScreen("the draft") { $0.contains("> draft") }
        try terminal.keys("C-o")
        try terminal.waitForScreen("the editor's text in the composer") { $0.contains("> written in the editor␊second line") }
        try terminal.waitForValue("#{alternate_on}", "1")
        let path = try String(contentsOfFile: tmp.path + "/path", encoding: .utf8).trimmingCharacters(in: .newlines)
        #expect(path.hasPrefix(runtime + "/sotto-compose-"), "\(path)")
        #expect(try String(contentsOfFile: tmp.path + "/mode", encoding: .utf8).trimmingCharacters(in: .newlines) == "600")
        #expect(try String(contentsOfFile: tmp.path + "/before", encoding: .utf8) == "draft", "the editor starts from the composer")
        #expect(!FileManager.default.fileExists(atPath: path), "the file is deleted")
        #expect(!alice.messages(id).contains { ($0["text"] as? String ?? "").contains("written in the editor") }, "not sent before Enter")
        try terminal.keys("Enter")
        try alice.waitUntil("sent with Enter") { hasText(alice, id, "written in the editor\nsecond line") }
        try terminal.waitForScreen("shown in the timeline") { $0.contains("me: written in the editor") }
    }

    @Test("Ctrl-F finds matches in the loaded page and in older pages the daemon is asked for")
    func searchTheWholeConversation() throws {
        let tmp = try TemporaryDirectory(prefix: "cs")
        let alice = try Device.start("alice", in: tmp.path)
        defer { alice.stop() }
        let id = try require(try alice.json(["new", "--name", "Long"])["conversationId"] as? String, "conversationId")
        let client = try ControlClient.connect(path: alice.runtime.controlSocketPath)
        for n in 1...150 {
            let text = n == 10 ? "the Needle one" : n == 140 ? "a needle two" : "line \(n)"
            _ = try client.call(SendMessageParams(conversation: id, text: text))
        }
        let terminal = try Self.chat(alice, id)
        defer { terminal.stop() }
        try terminal.waitForScreen("the latest") { $0.contains("me: line 150 (") }
        try terminal.keys("C-f")
        try terminal.waitForScreen("the search prompt") { $0.contains("search>") && $0.contains("Esc ends") }
        try terminal.type("needle")
        try terminal.keys("Enter")
        try terminal.waitForScreen("the newest match selected") { $0.contains("│▸") && $0.contains("me: a needle two") }
        try terminal.keys("Enter")
        // Message 10 is two pages older than the loaded one: the search asks the daemon for them.
        let found = try terminal.waitForScreen("the older match selected") { screen in
            screen.split(separator: "\n").contains { $0.contains("│▸") && $0.contains("me: the Needle one") }
        }
        #expect(!found.contains("line 150 ("), "scrolled to the match")
        try terminal.keys("Enter")
        try terminal.waitForScreen("no older match") { Self.status($0).contains("no older match") }
        try terminal.keys("Escape")
        try terminal.waitForScreen("the search ended") { screen in
            let rows = screen.split(separator: "\n", omittingEmptySubsequences: false)
            return rows.count > 23 && rows[23].hasPrefix(">") && !screen.contains("search>")
        }
    }
}
