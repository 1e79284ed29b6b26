import ControlProtocol
import FoundationEssentials
import Glibc
import SottoClient
import SottoWire

/// The running `sotto chat`: one thread that waits in `poll` on the keyboard, the library's
/// wake pipe and the signal pipe (no timer, no busy loop), draws the newest snapshots of the
/// conversation list and the open timeline, and turns keys into intents. Only the lines that
/// changed since the last frame are written.
///
/// ```swift
/// let app = try ChatApp(socketPath: path, initial: list, open: "3fa2…")
/// exit(app.run())
/// ```
final class ChatApp {
    private let socketPath: String
    private let terminal: TerminalSession
    private let signals: SignalPipe
    private let wake: WakePipe
    private let list: LiveConversationList
    private var listObservation: Observation?
    private var timeline: Timeline?
    private var timelineObservation: Observation?
    private var state = ChatState()
    private var decoder = KeyDecoder()
    private var shown: [String] = []
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
                for signal in signals.drain() {
                    if signal == SIGWINCH {
                        shown = []   // a full frame at the new size
                        terminal.write("\u{1b}[2J")
                    } else {
                        return 0
                    }
                }
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

    /// The terminal first: stopping the library never waits for the daemon, but nothing
    /// should stand between Ctrl-C and the terminal given back.
    private func finish() {
        terminal.restore()
        timeline?.stop()
        list.stop()
    }

    // MARK: Snapshots

    private func pullSnapshots() {
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
        state.timeline = timeline?.current
    }

    // MARK: Keys

    /// Acts on `key`; false means quit.
    private func handle(_ key: ChatKey) -> Bool {
        switch key {
        case .ctrlC:
            return false
        case .enter:
            let text = state.composer
            if !text.trimmingWhitespace().isEmpty, let timeline {
                timeline.send(text, replyTo: state.replyingTo)
                state.composer = ""
                state.replyingTo = nil
                state.scrollUp = 0
            }
        case .altEnter:
            state.composer += "\n"
        case .backspace:
            if !state.composer.isEmpty { state.composer.removeLast() }
        case .text(let text):
            state.composer += text
        case .escape:
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
                let total = ChatRenderer.itemLines(snapshot, state: state, width: paneWidth).count
                if state.scrollUp + rows >= total { timeline?.loadOlder() }
                state.scrollUp = min(state.scrollUp, max(0, total - 1))
            }
        case .pageDown:
            let (_, rows) = terminal.size
            state.scrollUp = max(0, state.scrollUp - max(1, rows - 5))
        }
        return true
    }

    /// Moves the message selection among the stored messages (not reactions, not echoes);
    /// from none, Ctrl-P selects the newest.
    private func selectMessage(by step: Int) {
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

    private func open(_ id: String) {
        guard id != state.selectedId else { return }
        close()
        state.selectedId = id
        state.scrollUp = 0
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
