import ControlProtocol
import SottoClient
import Testing
@testable import SottoCLI

/// The renderer is a pure function of `ChatState`: these frames are what a person sees at
/// 80×24 and 120×40 (wide characters, emoji, a reply's quote, a reaction gathered under its
/// message, the unread marker, a pending echo, a hostile text shown inert).
@Suite("Chat renderer snapshots")
struct ChatRendererTests {
    static let t0: Int64 = 1_764_000_000_000   // 2025-11-24 16:00 UTC

    static func message(_ id: String, _ text: String, from: String?, at minute: Int64, status: String = "received",
                        type: String = "xmtp.org/text:1.0", reference: String? = nil) -> MessageInfo {
        MessageInfo(id: id, conversationId: "c1", senderInboxId: from == nil ? "me0000000" : "\(from!)-inbox",
                    sentAtMs: t0 + minute * 60_000, contentType: type, text: text, outgoing: from == nil,
                    deliveryStatus: from == nil ? status : "received", referenceId: reference, senderName: from)
    }

    static var state: ChatState {
        var state = ChatState()
        state.color = false
        state.conversations = [
            ConversationInfo(id: "c1aaaaaaaaaa", state: "active", inboxId: "i1", unread: 2, members: 3, awake: true, isCreator: true,
                             name: "Trip 🏔", lastMessage: message("m5", "see you at 9", from: "bob", at: 5)),
            ConversationInfo(id: "c2bbbbbbbbbb", state: "active", inboxId: "i2", unread: 0, members: 2, awake: false, isCreator: false,
                             name: "家族", muted: true),
            ConversationInfo(id: "c3cccccccccc", state: "pending", inboxId: "i3", unread: 0, members: 1, awake: true, isCreator: false,
                             name: "Evil\u{1b}]0;title\u{07}"),
        ]
        state.selectedId = "c1aaaaaaaaaa"
        var timeline = TimelineSnapshot(conversationId: "c1aaaaaaaaaa")
        timeline.hasOlder = false
        timeline.connected = true
        timeline.items = [
            TimelineItem(message: message("m1", "train at 9?", from: "bob", at: 0)),
            TimelineItem(message: message("m2", "perfect", from: nil, at: 1, status: "delivered", type: "xmtp.org/reply:1.0", reference: "m1")),
            TimelineItem(message: message("m3", "reacted 👍", from: "bob", at: 2, type: "xmtp.org/reaction:1.0", reference: "m2")),
            TimelineItem(message: message("m4", "x\u{1b}[2J\u{1b}]0;pwned\u{07} forged (delivered)\u{202e}abc", from: "mallory", at: 3)),
            TimelineItem(message: message("m5", "see you at 9, a longer line that has to wrap in the narrow pane of an 80 column terminal", from: "bob", at: 5)),
            TimelineItem(message: message("local-1", "on my way", from: nil, at: 6, status: "pending"), isLocalEcho: true),
        ]
        timeline.firstUnreadId = "m4"
        state.timeline = timeline
        state.composer = "typing…"
        return state
    }

    static func check(_ frame: ChatFrame, width: Int, height: Int, expected: String) {
        #expect(frame.lines.count == height)
        for line in frame.lines { #expect(DisplayWidth.of(line) == width, "\(line)") }
        #expect(!frame.lines.joined().unicodeScalars.contains { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) },
                "no control reaches the terminal")
        #expect(frame.styled == frame.lines, "NO_COLOR: no attributes at all")
        let shown = frame.lines.map { $0.replacingOccurrences(of: " +$", with: "", options: .regularExpression) }.joined(separator: "\n")
        if shown != expected { print("FRAME \(width)x\(height):\n\(shown)\nEND FRAME") }
        #expect(shown == expected)
    }

    @Test("80×24")
    func frame80x24() {
        Self.check(ChatRenderer.render(Self.state, width: 80, height: 24), width: 80, height: 24, expected: Self.expected80x24)
    }

    @Test("120×40")
    func frame120x40() {
        Self.check(ChatRenderer.render(Self.state, width: 120, height: 40), width: 120, height: 40, expected: Self.expected120x40)
    }

    @Test("with colour, attributes are added around the same text")
    func colour() {
        var state = Self.state
        state.color = true
        let frame = ChatRenderer.render(state, width: 80, height: 24)
        #expect(frame.styled != frame.lines)
        #expect(frame.styled.map { $0.replacingOccurrences(of: "\u{1b}\\[[0-9;]*m", with: "", options: .regularExpression) } == frame.lines)
    }

    @Test("a confirmation names what it destroys, inert, and the composer asks for the name")
    func confirmationFrame() {
        var state = Self.state
        state.selectedId = "c3cccccccccc"
        state.timeline = nil
        state.composer = "Evil"
        state.confirmation = PendingConfirmation(action: .explode(conversation: "c3cccccccccc", atMs: nil),
                                          expected: ChatRenderer.name(of: state.conversations[2]),
                                          question: "Explode \(ChatRenderer.name(of: state.conversations[2])) on every device now?",
                                          verb: "explode")
        let frame = ChatRenderer.render(state, width: 80, height: 24)
        #expect(frame.lines[22].hasPrefix(" Explode Evil␛]0;title␇ on every device now? Type Evil␛]0;title␇ and Enter"), "\(frame.lines[22])")
        #expect(frame.lines[23].hasPrefix("type Evil␛]0;title␇ to explode> Evil"), "\(frame.lines[23])")
        #expect(!frame.lines.joined().unicodeScalars.contains { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) })
    }

    @Test("a panel (an invite code) spans the body in whole rows; typing / lists the commands")
    func panelAndCommandHints() {
        var state = Self.state
        let code = "sotto1:" + String(repeating: "AbCd0123", count: 20)
        state.panel = ChatPanel(title: "Invite to Trip · Esc closes", lines: [code, "", "Give it to the other person."])
        state.composer = "/inv"
        let frame = ChatRenderer.render(state, width: 80, height: 24)
        #expect(frame.lines[1].hasPrefix(" Invite to Trip · Esc closes"))
        let rows = frame.lines[2...4].map { $0.replacingOccurrences(of: " +$", with: "", options: .regularExpression) }
        #expect(rows.joined() == code, "\(rows)")
        #expect(frame.lines[22].hasPrefix(" /new NAME · /invite · /join CODE"))
        state.search = ChatSearch()
        state.composer = "train"
        state.panel = nil
        let searching = ChatRenderer.render(state, width: 80, height: 24)
        #expect(searching.lines[23].hasPrefix("search> train"))
        #expect(searching.lines[22].hasPrefix(" search: Enter finds the next older match"))
    }

    @Test("a frame lays out only the newest items it shows, and shows what the whole layout would")
    func onlyTheNewestAreLaidOut() {
        var state = Self.state
        var timeline = state.timeline!
        var items: [TimelineItem] = []
        for n in 0..<300 {
            let text = n % 7 == 0 ? "a longer text that wraps over more than one line of the pane, number \(n)" : "short \(n)"
            let from: String? = n % 2 == 0 ? "bob" : nil
            items.append(TimelineItem(message: Self.message("x\(n)", text, from: from, at: Int64(n))))
        }
        timeline.items = items
        timeline.hasOlder = true
        state.timeline = timeline
        for scrollUp in [0, 5, 40, 200, 10_000] {
            state.scrollUp = scrollUp
            let all = ChatRenderer.itemLines(timeline, state: state, width: 53)
            let end = max(0, all.count - scrollUp), start = max(0, end - 21)
            let expected = Array(all[start..<end]).map(\.0)
            let shown = ChatRenderer.timelineLines(state, width: 53, rows: 21).map(\.0).filter { !$0.allSatisfy { $0 == " " } }
            #expect(shown == expected, "scrollUp \(scrollUp)")
        }
    }

    @Test("an item's kept lines are used again only while what they show is the same: echo text, status, selection, reactions, width")
    func keptLinesFollowWhatTheyShow() {
        var state = Self.state
        func shown(_ timeline: TimelineSnapshot, width: Int = 53) -> String {
            ChatRenderer.itemLines(timeline, state: state, width: width).map(\.0).joined(separator: "\n")
        }
        var timeline = TimelineSnapshot(conversationId: "kept-\(UInt64.random(in: 0...UInt64.max))")
        timeline.hasOlder = false
        timeline.items = [TimelineItem(message: Self.message("local-1", "first echo", from: nil, at: 0, status: "pending"), isLocalEcho: true)]
        #expect(shown(timeline).contains("me: first echo (pending)"))
        // Another timeline's (or a reopened one's) local-1 is another message.
        timeline.items = [TimelineItem(message: Self.message("local-1", "second echo", from: nil, at: 1, status: "pending"), isLocalEcho: true)]
        #expect(shown(timeline).contains("me: second echo (pending)"))
        #expect(!shown(timeline).contains("first echo"))
        timeline.items = [TimelineItem(message: Self.message("local-1", "second echo", from: nil, at: 4, status: "pending"), isLocalEcho: true)]
        #expect(shown(timeline).contains("16:04 me: second echo"), "the same text sent again later shows its own time")

        timeline.items = [TimelineItem(message: Self.message("k1", "stored", from: nil, at: 2, status: "sent"))]
        #expect(shown(timeline).contains("me: stored (sent)"))
        timeline.items[0].message.deliveryStatus = "delivered"
        #expect(shown(timeline).contains("me: stored (delivered)"))
        state.selectedMessageId = "k1"
        #expect(shown(timeline).contains("▸"))
        state.selectedMessageId = nil
        #expect(!shown(timeline).contains("▸"))
        timeline.items.append(TimelineItem(message: Self.message("k2", "reacted 🎉", from: "bob", at: 3, type: "xmtp.org/reaction:1.0", reference: "k1")))
        #expect(shown(timeline).contains("🎉 bob"))
        let narrow = shown(timeline, width: 12)
        #expect(narrow.split(separator: "\n").allSatisfy { DisplayWidth.of(String($0)) <= 12 }, "laid out again at the new width")
    }

    @Test("scrolled back with new messages out of view: the timeline's bottom row counts them and names End")
    func newMessagesIndicator() {
        var state = Self.state
        state.scrollUp = 3
        #expect(!ChatRenderer.render(state, width: 80, height: 24).lines.contains { $0.contains("new message") }, "none came: no indicator")
        state.newBelow = 1
        let one = ChatRenderer.render(state, width: 80, height: 24).lines
        #expect(one[21].contains("│ ↓ 1 new message · End shows the latest  "), "the pane's bottom row: \(one[21])")
        let without = ChatRenderer.render({ var plain = state; plain.newBelow = 0; return plain }(), width: 80, height: 24).lines
        func pane(_ rows: ArraySlice<String>) -> [Substring] { rows.map { $0.split(separator: "│", maxSplits: 1).last ?? "" } }
        #expect(pane(one[1...20]) == pane(without[2...21]), "the rows it would cover moved up by one")
        state.newBelow = 0
        state.timeline?.hasNewer = true
        state.timeline?.newerArrived = 4
        #expect(ChatRenderer.render(state, width: 80, height: 24).lines[21].contains("↓ 4 new messages · End shows the latest"))
        state.timeline?.hasNewer = false
        #expect(!ChatRenderer.render(state, width: 80, height: 24).lines.contains { $0.contains("new message") },
                "the latest page loaded again: what came is in view")
    }

    @Test("commands: parsed, //text is a message, an unknown command is not sent")
    func slashCommands() {
        #expect(SlashCommand.parse("hello") == .message("hello"))
        #expect(SlashCommand.parse("//shrug") == .message("/shrug"))
        #expect(SlashCommand.parse("/new Weekend trip") == .command(.new(name: "Weekend trip")))
        #expect(SlashCommand.parse("/new") == .command(.new(name: nil)))
        #expect(SlashCommand.parse("/invite 1h") == .command(.invite(expiresInMs: 3_600_000)))
        #expect(SlashCommand.parse("/join sotto1:ab\ncd ") == .command(.join(code: "sotto1:abcd")))
        #expect(SlashCommand.parse("/mute") == .command(.mute(true)))
        #expect(SlashCommand.parse("/unmute") == .command(.mute(false)))
        #expect(SlashCommand.parse("/leave") == .command(.leave))
        #expect(SlashCommand.parse("/remove bob") == .command(.remove(member: "bob")))
        #expect(SlashCommand.parse("/explode") == .command(.explode(inMs: nil, cancel: false)))
        #expect(SlashCommand.parse("/explode 2h") == .command(.explode(inMs: 7_200_000, cancel: false)))
        #expect(SlashCommand.parse("/explode cancel") == .command(.explode(inMs: nil, cancel: true)))
        if case .invalid = SlashCommand.parse("/explode soon") {} else { Issue.record("a bad time is refused") }
        if case .invalid = SlashCommand.parse("/nuke") {} else { Issue.record("an unknown command is refused, not sent") }
        if case .invalid = SlashCommand.parse("/remove") {} else { Issue.record("/remove needs a member") }
        #expect(SlashCommand.helpLines.allSatisfy { DisplayWidth.of($0) <= 79 }, "the help fits 80 columns unwrapped")
    }

    static let expected80x24 = """
     Sotto · Trip 🏔 · 3 members
    ›Trip 🏔                 2│
      bob: see you at 9       │
     家族                    m│
      asleep                  │
     Evil␛]0;title␇          …│
      waiting for the creator │
                              │
                              │
                              │
                              │
                              │16:00 bob: train at 9?
                              │      ↪ bob: train at 9?
                              │16:01 me: perfect (delivered)
                              │      👍 bob
                              │──────────────────────── new ────────────────────────
                              │16:03 mallory: x␛[2J␛]0;pwned␇ forged
                              │      (delivered)<U+202E>abc
                              │16:05 bob: see you at 9, a longer line that has to
                              │      wrap in the narrow pane of an 80 column
                              │      terminal
                              │16:06 me: on my way (pending)
     Enter send · ↑↓/Tab conversation · PgUp/PgDn scroll · /help · Ctrl-C quit
    > typing…
    """

    static let expected120x40 = """
     Sotto · Trip 🏔 · 3 members
    ›Trip 🏔                     2│
      bob: see you at 9           │
     家族                        m│
      asleep                      │
     Evil␛]0;title␇              …│
      waiting for the creator     │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │
                                  │16:00 bob: train at 9?
                                  │      ↪ bob: train at 9?
                                  │16:01 me: perfect (delivered)
                                  │      👍 bob
                                  │────────────────────────────────────────── new ──────────────────────────────────────────
                                  │16:03 mallory: x␛[2J␛]0;pwned␇ forged (delivered)<U+202E>abc
                                  │16:05 bob: see you at 9, a longer line that has to wrap in the narrow pane of an 80
                                  │      column terminal
                                  │16:06 me: on my way (pending)
     Enter send · ↑↓/Tab conversation · PgUp/PgDn scroll · /help · Ctrl-C quit
    > typing…
    """
}
