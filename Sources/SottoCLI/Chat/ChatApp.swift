import ControlProtocol
import FoundationEssentials
import Glibc
import SottoClient
import SottoWire

/// The running `sotto chat`: one thread that waits in `poll` on the keyboard, the library's
/// wake pipe and the signal pipe (no timer, no busy loop), draws the newest snapshots of the
/// conversation list and the open timeline, and turns keys into intents. Only the lines that
/// changed since the last frame are written. Commands typed in the composer (`/new`, `/invite`,
/// `/join`, `/mute`, `/leave`, `/remove`, `/explode`) are in `ChatApp+Commands`, the search
/// (Ctrl-F) in `ChatApp+Search`.
///
/// ```swift
/// let app = try ChatApp(socketPath: path, initial: list, open: "3fa2…")
/// exit(app.run())
/// ```
final class ChatApp {
    let socketPath: String
    let terminal: TerminalSession
    private let signals: SignalPipe
    let wake: WakePipe
    let list: LiveConversationList
    let actions: ConversationActions
    private var listObservation: Observation?
    var timeline: Timeline?
    private var timelineObservation: Observation?
    var state = ChatState()
    private var decoder = KeyDecoder()
    var shown: [String] = []
    /// What the actions' callbacks report (on the actions' queue), for the UI thread to apply.
    let inbox: ActionInbox
    /// A conversation just created or joined: opened as soon as the list shows it.
    var pendingOpen: String?
    /// The timeline's generation when the search asked for an older page.
    var searchWaitsFor = 0
    /// `SOTTO_CHAT_EXIT_AFTER_FIRST_FRAME=1`: quit once a frame shows the loaded list and the
    /// open conversation (Benchmarks/chat-start-bench.sh measures start → first full frame).
    private let exitAfterFirstFrame = ProcessInfo.processInfo.environment["SOTTO_CHAT_EXIT_AFTER_FIRST_FRAME"] == "1"

    init(socketPath: String, initial: [ConversationInfo], open: String?) throws {
        guard let signals = SignalPipe.install(), let wake = WakePipe() else {
            throw TerminalSession.Failure(description: "cannot make a pipe: errno \(errno)")
        }
        self.socketPath = socketPath
        self.signals = signals
        self.wake = wake
        list = LiveConversationList(socketPath: socketPath)
        actions = ConversationActions(socketPath: socketPath)
        inbox = ActionInbox(wake: wake, list: list)
        state.conversations = initial
        state.color = (ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty
        state.utcOffsetSeconds = LocalTime.utcOffsetSeconds()
        terminal = try TerminalSession.enter()
        listObservation = list.observe { [wake] _ in wake.wake() }
        list.start()
        if let id = open ?? initial.first?.id { self.open(id) }
    }

    /// Runs until Ctrl-C, SIGTERM, SIGINT, SIGHUP or the end of input; restores the
    /// terminal and returns the exit status.
    func run() -> Int32 {
        defer { finish() }
        while true {
            draw()
            if exitAfterFirstFrame, list.current.generation > 0, timeline?.current.connected ?? true { return 0 }
            var fds = [pollfd(fd: terminal.input, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: signals.readEnd, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return 70
            }
            if fds[2].revents != 0 {
                for signal in signals.drain() where !handle(signal: signal) { return 0 }
            }
            if fds[1].revents != 0 { wake.drain() }
            if fds[0].revents != 0 {
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = read(terminal.input, &buffer, buffer.count)
                if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) { return 0 }
                if count > 0 {
                    for key in decoder.feed(Array(buffer[0..<count])) where !handle(key) { return 0 }
                }
            }
            pullSnapshots()
        }
    }

    /// Acts on a signal; false means quit.
    private func handle(signal: Int32) -> Bool {
        guard signal == SIGWINCH else { return false }
        shown = []   // a full frame at the new size
        terminal.write("\u{1b}[2J")
        return true
    }

    /// The terminal first: stopping the library never waits for the daemon, but nothing
    /// should stand between Ctrl-C and the terminal given back.
    private func finish() {
        terminal.restore()
        timeline?.stop()
        list.stop()
        actions.stop()
    }

    // MARK: Snapshots

    private func pullSnapshots() {
        applyOutcomes()
        let snapshot = list.current
        if snapshot.generation > 0 { state.conversations = snapshot.conversations }
        state.connected = snapshot.connected || (snapshot.generation == 0 && snapshot.problem == nil)
        state.problem = snapshot.problem ?? timeline?.current.problem
        if let selected = state.selectedId, !state.conversations.contains(where: { $0.id == selected }), snapshot.generation > 0 {
            // Gone (exploded, left): open the first one instead.
            close()
            if let first = state.conversations.first?.id { open(first) }
        } else if state.selectedId == nil, let first = state.conversations.first?.id {
            open(first)
        }
        if let pending = pendingOpen, state.conversations.contains(where: { $0.id == pending }) {
            pendingOpen = nil
            open(pending)
        }
        let previous = state.timeline
        state.timeline = timeline?.current
        countNewBelow(from: previous)
        keepViewInPlace(from: previous)
        continueSearch()
    }

    // MARK: Keys

    /// Acts on `key`; false means quit.
    private func handle(_ key: ChatKey) -> Bool {
        if key == .ctrlC { return false }
        state.notice = nil
        if state.confirmation != nil, handleConfirming(key) { return true }
        if state.search != nil, handleSearching(key) { return true }
        switch key {
        case .ctrlC:
            return false
        case .enter:
            state.panel = nil
            let text = state.composer
            switch SlashCommand.parse(text) {
            case .command(let command):
                state.composer = ""
                run(command)
            case .invalid(let why):
                state.notice = why
            case .message(let message):
                if !message.trimmingWhitespace().isEmpty, let timeline {
                    timeline.showLatest()   // scrolled far back: the latest page again, where the message goes
                    timeline.send(message, replyTo: state.replyingTo)
                    state.composer = ""
                    state.replyingTo = nil
                    state.scrollUp = 0
                    state.newBelow = 0
                }
            }
        case .editor:
            return composeInEditor()
        case .search:
            startSearch()
        case .altEnter:
            state.composer += "\n"
        case .backspace:
            if !state.composer.isEmpty { state.composer.removeLast() }
        case .text(let text):
            state.composer += text
        case .paste(let text, let dropped):
            state.composer += text
            state.notice = PastedText.notice(text, droppedBytes: dropped)
        case .escape:
            state.panel = nil
            state.replyingTo = nil
            state.selectedMessageId = nil
        case .previousMessage:
            selectMessage(by: -1)
        case .nextMessage:
            selectMessage(by: 1)
        case .reply:
            if let selected = state.selectedMessageId {
                state.replyingTo = selected
                state.selectedMessageId = nil
            }
        case .react:
            if let selected = state.selectedMessageId, let timeline {
                let emoji = state.composer.trimmingWhitespace()
                timeline.react(to: selected, emoji: emoji.isEmpty ? "👍" : emoji)
                state.composer = ""
                state.selectedMessageId = nil
            }
        case .up, .backTab:
            move(by: -1)
        case .down, .tab:
            move(by: 1)
        case .pageUp:
            let (columns, rows) = terminal.size
            let page = max(1, rows - 5)
            state.scrollUp += page
            if let snapshot = timeline?.current {
                let paneWidth = columns - ChatRenderer.listWidth(for: columns) - 1
                // The layout the last frame drew for this snapshot: a key that only scrolls
                // lays out nothing (docs/adr/0072).
                let reach = state.scrollUp + rows
                let total = ChatRenderer.wholeLayout(snapshot, state: state, width: paneWidth).lines.count
                if reach >= total { timeline?.loadOlder() }
                state.scrollUp = min(state.scrollUp, max(0, total - 1))
            }
        case .end:
            showLatest()
        case .pageDown:
            let (_, rows) = terminal.size
            state.scrollUp = max(0, state.scrollUp - max(1, rows - 5))
            loadNewerIfNeeded(rows: rows)
        }
        return true
    }

    /// Moves the message selection among the stored messages (not reactions, not echoes);
    /// from none, Ctrl-P selects the newest.
    func selectMessage(by step: Int) {
        let ids = (timeline?.current.items ?? [])
            .filter { !$0.isLocalEcho && $0.message.contentType != ContentType.reaction }.map(\.id)
        guard !ids.isEmpty else { return }
        guard let current = state.selectedMessageId, let index = ids.firstIndex(of: current) else {
            state.selectedMessageId = step < 0 ? ids.last : nil
            return
        }
        let next = index + step
        state.selectedMessageId = next >= ids.count ? nil : ids[max(0, next)]
    }

    private func move(by step: Int) {
        guard !state.conversations.isEmpty else { return }
        let current = state.selectedIndex ?? 0
        let next = (current + step + state.conversations.count) % state.conversations.count
        open(state.conversations[next].id)
    }

    // MARK: Opening a conversation

    func open(_ id: String) {
        guard id != state.selectedId else { return }
        close()
        state.selectedId = id
        state.scrollUp = 0
        state.newBelow = 0
        state.replyingTo = nil
        state.selectedMessageId = nil
        let unread = state.conversations.first { $0.id == id }?.unread ?? 0
        let opened = Timeline(conversation: id, socketPath: socketPath, unreadAtOpen: unread)
        timelineObservation = opened.observe { [wake] _ in wake.wake() }
        timeline = opened
        opened.start()
        state.timeline = opened.current
    }

    private func close() {
        timelineObservation?.cancel()
        timelineObservation = nil
        timeline?.stop()
        timeline = nil
        state.timeline = nil
    }

    // MARK: Ctrl-O

    /// The terminal is lent to the editor and taken back; the editor's text goes into the
    /// composer (sent only with Enter). A signal that came meanwhile: SIGINT was the editor's
    /// (a Ctrl-C typed in it), the others are acted on here. False means quit.
    private func composeInEditor() -> Bool {
        terminal.suspend()
        let edited = ExternalEditor.edit(state.composer)
        terminal.resume()
        shown = []
        let quit = signals.drain().contains { $0 != SIGINT && !handle(signal: $0) }
        switch edited {
        case .success(let text): state.composer = text
        case .failure(let failure): state.notice = failure.description
        }
        return !quit
    }

    // MARK: Drawing

    private func draw() {
        let (columns, rows) = terminal.size
        let frame = ChatRenderer.render(state, width: columns, height: rows)
        var out = "\u{1b}[?25l"
        for (row, line) in frame.styled.enumerated() where row >= shown.count || shown[row] != line {
            out += "\u{1b}[\(row + 1);1H" + line
        }
        out += "\u{1b}[\(frame.cursorRow + 1);\(frame.cursorColumn + 1)H\u{1b}[?25h"
        shown = frame.styled
        terminal.write(out)
    }
}
