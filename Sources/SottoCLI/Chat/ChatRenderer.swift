import ControlProtocol
import SottoClient
import SottoWire

/// One frame of `sotto chat`: `lines` as a person reads them (each exactly `width` columns),
/// `styled` the same with SGR attributes (identical to `lines` with NO_COLOR), and where the
/// cursor goes in the composer.
///
/// ```swift
/// let frame = ChatRenderer.render(state, width: 80, height: 24)
/// frame.lines.joined(separator: "\n")   // the snapshot a test compares
/// ```
struct ChatFrame: Equatable {
    var lines: [String]
    var styled: [String]
    var cursorRow: Int
    var cursorColumn: Int
}

/// Draws a `ChatState`: a title line, the conversation list (left) and the open
/// conversation's timeline (right), a status line and the composer. A pure function: no I/O,
/// no clock. Every string another device sent or named goes through `InertText` here.
///
/// ```
///  Sotto · Trip · 2 members
/// ›Trip                  │12:01 bob: train at 9?
///   bob: train at 9?     │12:02 me: perfect (delivered)
/// ```
enum ChatRenderer {
    // MARK: Layout

    static func listWidth(for width: Int) -> Int { max(12, min(30, width / 3)) }

    static func render(_ state: ChatState, width: Int, height: Int) -> ChatFrame {
        let width = max(20, width), height = max(6, height)
        let bodyRows = height - 3
        let left = listWidth(for: width)
        let right = width - left - 1
        let listLines = self.listLines(state, width: left, rows: bodyRows)
        let timelineLines = self.timelineLines(state, width: right, rows: bodyRows)
        let panel = state.panel.map { panelLines($0, state: state, width: width, rows: bodyRows) }

        var lines: [String] = []
        var styled: [String] = []
        let title = " Sotto · " + (state.selected.map { "\(name(of: $0)) · \($0.members) members" } ?? "no conversation open")
        lines.append(DisplayWidth.fit(title, columns: width))
        styled.append(sgr(state, "7") + lines[0] + reset(state))
        for row in 0..<bodyRows {
            if let panel {
                lines.append(panel[row].0)
                styled.append(panel[row].1)
                continue
            }
            let (plainLeft, styledLeft) = listLines[row]
            let (plainRight, styledRight) = timelineLines[row]
            lines.append(plainLeft + "│" + plainRight)
            styled.append(styledLeft + "│" + styledRight)
        }
        let status = statusLine(state)
        lines.append(DisplayWidth.fit(status, columns: width))
        styled.append(sgr(state, "2") + lines.last! + reset(state))

        let prompt = composerPrompt(state)
        let room = max(1, width - DisplayWidth.of(prompt) - 1)
        var shown = InertText.line(state.composer)
        while DisplayWidth.of(shown) > room { shown.removeFirst() }
        let composer = DisplayWidth.fit(prompt + shown, columns: width)
        lines.append(composer)
        styled.append(composer)
        return ChatFrame(lines: lines, styled: styled, cursorRow: height - 1,
                         cursorColumn: DisplayWidth.of(prompt) + DisplayWidth.of(shown))
    }

    /// The composer's prompt: what Enter will do with what is typed.
    static func composerPrompt(_ state: ChatState) -> String {
        if let confirmation = state.confirmation { return "type \(InertText.line(confirmation.expected)) to \(confirmation.verb)> " }
        if state.search != nil { return "search> " }
        return state.replyingTo.map { "reply \($0.prefix(8))> " } ?? "> "
    }

    // MARK: A panel over the body (help, an invite)

    /// The panel's title and lines across the whole width, each line broken at the width (an
    /// invite code has no spaces: it is cut into whole rows, so copying the rows in order
    /// gives the code), the rest blank.
    static func panelLines(_ panel: ChatPanel, state: ChatState, width: Int, rows: Int) -> [(String, String)] {
        var out: [(String, String)] = []
        let title = DisplayWidth.fit(" " + InertText.line(panel.title), columns: width)
        out.append((title, sgr(state, "1") + title + reset(state)))
        for line in panel.lines {
            for piece in DisplayWidth.wrap(InertText.line(line), columns: width) {
                let plain = DisplayWidth.fit(piece, columns: width)
                out.append((plain, plain))
            }
        }
        let blank = String(repeating: " ", count: width)
        while out.count < rows { out.append((blank, blank)) }
        return Array(out.prefix(rows))
    }

    // MARK: The conversation list

    /// Two lines per conversation: the name with its unread count, then the last message or
    /// its state; scrolled so the selected one is visible.
    static func listLines(_ state: ChatState, width: Int, rows: Int) -> [(String, String)] {
        var out: [(String, String)] = []
        if state.conversations.isEmpty {
            out.append((DisplayWidth.fit(" no conversations", columns: width), DisplayWidth.fit(" no conversations", columns: width)))
        }
        let perConversation = 2
        let visible = max(1, rows / perConversation)
        let selected = state.selectedIndex ?? 0
        let first = max(0, min(selected - visible + 1, state.conversations.count - visible))
        for conversation in state.conversations.dropFirst(max(0, first)).prefix(visible) {
            let isSelected = conversation.id == state.selectedId
            let unread = conversation.unread > 0 ? " \(conversation.unread)" : ""
            var flags = ""
            if conversation.muted { flags += " m" }
            if conversation.state == "pending" { flags += " …" }
            let marker = isSelected ? "›" : " "
            let nameColumns = max(1, width - 1 - DisplayWidth.of(unread + flags))
            let top = marker + DisplayWidth.fit(name(of: conversation), columns: nameColumns) + flags + unread
            let bottom = "  " + DisplayWidth.fit(preview(of: conversation, utcOffsetSeconds: state.utcOffsetSeconds), columns: max(0, width - 2))
            let topPlain = DisplayWidth.fit(top, columns: width)
            let bottomPlain = DisplayWidth.fit(bottom, columns: width)
            out.append((topPlain, isSelected ? sgr(state, "1;7") + topPlain + reset(state)
                                             : (conversation.unread > 0 ? sgr(state, "1") + topPlain + reset(state) : topPlain)))
            out.append((bottomPlain, sgr(state, "2") + bottomPlain + reset(state)))
        }
        let blank = String(repeating: " ", count: width)
        while out.count < rows { out.append((blank, blank)) }
        return Array(out.prefix(rows))
    }

    static func name(of conversation: ConversationInfo) -> String {
        conversation.name.map(InertText.line) ?? "(unnamed) \(conversation.id.prefix(6))"
    }

    static func preview(of conversation: ConversationInfo, utcOffsetSeconds: Int = 0) -> String {
        if conversation.state == "pending" { return "waiting for the creator" }
        if let expires = conversation.expiresAtMs { return "explodes at \(time(expires, offset: utcOffsetSeconds))" }
        if let last = conversation.lastMessage {
            return sender(of: last) + ": " + InertText.line(last.text)
        }
        return conversation.awake ? "no messages" : "asleep"
    }

    static func sender(of message: MessageInfo) -> String {
        if message.outgoing { return "me" }
        if let name = message.senderName, !name.isEmpty { return InertText.line(name) }
        return String(message.senderInboxId.prefix(8))
    }

    // MARK: The timeline

    /// The open conversation's messages, newest at the bottom, `scrollUp` lines up.
    static func timelineLines(_ state: ChatState, width: Int, rows: Int) -> [(String, String)] {
        var all: [(String, String)] = []
        if let timeline = state.timeline {
            all = wholeLayout(timeline, state: state, width: width).lines
            if all.isEmpty {
                let text = timeline.connected ? " no messages yet: type one below" : " loading…"
                all.append((DisplayWidth.fit(text, columns: width), DisplayWidth.fit(text, columns: width)))
            }
        }
        // The indicator takes the bottom row; the lines it would cover move up by one.
        let indicator = rows > 1 ? newMessagesIndicator(state) : nil
        let shown = indicator == nil ? rows : rows - 1
        let end = max(0, all.count - state.scrollUp)
        let start = max(0, end - shown)
        var window = Array(all[start..<end])
        let blank = String(repeating: " ", count: width)
        while window.count < shown { window.insert((blank, blank), at: 0) }
        if let indicator { window.append(styledLine(indicator, "7", state: state, width: width)) }
        return window
    }

    /// The timeline's bottom row while scrolled back and messages came that the view does
    /// not show: how many, and the key that shows them (docs/adr/0072).
    static func newMessagesIndicator(_ state: ChatState) -> String? {
        let count = state.newMessagesOutOfView
        guard count > 0 else { return nil }
        return " ↓ \(count) new message\(count == 1 ? "" : "s") · End shows the latest"
    }

    /// Every loaded item as lines: `HH:MM sender: text (status)`, wrapped under its start;
    /// a reply quotes what it answers; reactions gather on one line under their message; the
    /// first message unread at opening gets a `new` marker above it. Each item's lines are
    /// kept (`ItemLinesCache`), and a frame takes the whole layout once per snapshot, so a key
    /// that only scrolls lays out nothing (docs/adr/0072).
    static func itemLines(_ timeline: TimelineSnapshot, state: ChatState, width: Int) -> [(String, String)] {
        layout(timeline, state: state, width: width).lines
    }

    /// Every loaded item laid out once per snapshot and state it shows (`ItemLinesCache`): the
    /// frame, a page up's reach and the view keeper all read this one layout.
    static func wholeLayout(_ timeline: TimelineSnapshot, state: ChatState, width: Int) -> TimelineLayout {
        let whole = ItemLinesCache.Whole(timeline: timeline, width: width, selectedMessageId: state.selectedMessageId,
                                         color: state.color, utcOffsetSeconds: state.utcOffsetSeconds)
        return ItemLinesCache.shared.wholeLayout(for: whole) { layout(timeline, state: state, width: width) }
    }

    /// `itemLines` with the line each item's block ends at.
    static func layout(_ timeline: TimelineSnapshot, state: ChatState, width: Int) -> TimelineLayout {
        var reactions: [String: [(emoji: String, who: String)]] = [:]
        var byId: [String: MessageInfo] = [:]
        for item in timeline.items {
            byId[item.id] = item.message
            if item.message.contentType == ContentType.reaction, let target = item.message.referenceId {
                let emoji = item.message.text.hasPrefix("reacted ") ? String(item.message.text.dropFirst(8)) : item.message.text
                reactions[target, default: []].append((InertText.line(emoji), sender(of: item.message)))
            }
        }
        var out = TimelineLayout()
        out.end.reserveCapacity(timeline.items.count)
        if timeline.hasOlder && !timeline.items.isEmpty {
            out.lines.append(styledLine(timeline.loadingOlder ? " loading older…" : " ⇞ PageUp for older", "2", state: state, width: width))
        }
        for item in timeline.items where item.message.contentType != ContentType.reaction {
            let gathered = reactions[item.id]?.map { "\($0.emoji) \($0.who)" } ?? []
            let key = ItemLinesCache.Key(
                conversationId: timeline.conversationId, id: item.id,
                changingText: item.isLocalEcho || item.message.attachment != nil ? item.message.text : nil, sentAtMs: item.message.sentAtMs, senderName: item.message.senderName, status: item.deliveryStatus, sendError: item.sendError,
                selected: item.id == state.selectedMessageId, firstUnread: item.id == timeline.firstUnreadId,
                quoted: item.message.referenceId.map { byId[$0] != nil } ?? false, reactions: gathered,
                width: width, color: state.color, utcOffsetSeconds: state.utcOffsetSeconds)
            out.lines += ItemLinesCache.shared.lines(for: key) {
                lines(of: item, timeline: timeline, byId: byId, reactions: reactions, state: state, width: width)
            }
            out.end[item.id] = out.lines.count
        }
        return out
    }

    /// One message's lines: the `new` marker above it when it is the first unread, the quote
    /// of what it answers, its text wrapped, a send error, the reactions gathered under it.
    static func lines(of item: TimelineItem, timeline: TimelineSnapshot, byId: [String: MessageInfo],
                      reactions: [String: [(emoji: String, who: String)]], state: ChatState, width: Int) -> [(String, String)] {
        var out: [(String, String)] = []
        func add(_ text: String, _ attributes: String?) { out.append(styledLine(text, attributes, state: state, width: width)) }
        let message = item.message
        if message.id == timeline.firstUnreadId {
            let label = " new "
            let side = max(0, (width - label.count) / 2)
            add(String(repeating: "─", count: side) + label + String(repeating: "─", count: max(0, width - side - label.count)), "1")
        }
        if let reference = message.referenceId, let quoted = byId[reference] {
            add("      ↪ " + sender(of: quoted) + ": " + InertText.line(quoted.text), "2")
        }
        let status = message.outgoing ? " (\(item.deliveryStatus))" : ""
        let mark = message.id == state.selectedMessageId ? "▸" : ""
        let head = "\(mark)\(time(message.sentAtMs, offset: state.utcOffsetSeconds)) \(sender(of: message)): "
        let textLines = message.text.split(separator: "\n", omittingEmptySubsequences: false).map { InertText.line(String($0)) }
        let indent = "      "
        var wrapped: [String] = []
        for (index, textLine) in textLines.enumerated() {
            let last = index == textLines.count - 1
            let body = (index == 0 ? head : "") + textLine + (last ? status : "")
            let pieces = DisplayWidth.wrap(body, columns: index == 0 ? width : width - indent.count,
                                           continuation: width - indent.count)
            for (piece, text) in pieces.enumerated() { wrapped.append(index == 0 && piece == 0 ? text : indent + text) }
        }
        let attributes: String? = item.sendError != nil ? "31" : (mark.isEmpty ? nil : "7")
        for line in wrapped { add(line, attributes) }
        if let error = item.sendError { add("      not sent: " + InertText.line(error), "31") }
        if let gathered = reactions[message.id] {
            add("      " + gathered.map { "\($0.emoji) \($0.who)" }.joined(separator: "  "), "2")
        }
        return out
    }

    static func styledLine(_ text: String, _ attributes: String?, state: ChatState, width: Int) -> (String, String) {
        let plain = DisplayWidth.fit(text, columns: width)
        return (plain, attributes.map { sgr(state, $0) + plain + reset(state) } ?? plain)
    }

    static func time(_ ms: Int64, offset: Int) -> String {
        let seconds = ms / 1000 + Int64(offset)
        let minutes = ((seconds / 60) % (24 * 60) + 24 * 60) % (24 * 60)
        let hh = minutes / 60, mm = minutes % 60
        return (hh < 10 ? "0" : "") + "\(hh):" + (mm < 10 ? "0" : "") + "\(mm)"
    }

    // MARK: Status

    static func statusLine(_ state: ChatState) -> String {
        if !state.connected { return " daemon unreachable, reconnecting…" + (state.problem.map { " (" + InertText.line($0) + ")" } ?? "") }
        if let confirmation = state.confirmation {
            return " " + InertText.line(confirmation.question) + " Type \(InertText.line(confirmation.expected)) and Enter; Esc cancels"
        }
        if let notice = state.notice { return " " + InertText.line(notice) }
        if let search = state.search {
            if search.searchingOlder { return " searching older messages… · Esc ends" }
            return " search: Enter finds the next older match · Esc ends"
        }
        if let problem = state.problem { return " " + InertText.line(problem) }
        if state.selectedMessageId != nil { return " Ctrl-R reply · Ctrl-T react (composer's emoji, else 👍) · Esc unselect" }
        if state.composer.hasPrefix("/") && !state.composer.hasPrefix("//") { return " " + SlashCommand.summary }
        return " Enter send · ↑↓/Tab conversation · PgUp/PgDn scroll · /help · Ctrl-C quit"
    }

    // MARK: Attributes

    static func sgr(_ state: ChatState, _ code: String) -> String { state.color ? "\u{1b}[\(code)m" : "" }
    static func reset(_ state: ChatState) -> String { state.color ? "\u{1b}[0m" : "" }
}
