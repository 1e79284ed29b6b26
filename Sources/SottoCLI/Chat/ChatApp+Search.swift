import ControlProtocol
import FoundationEssentials
import SottoClient
import SottoWire

// MARK: - Search in the open conversation (Ctrl-F)

extension ChatApp {
    /// Ctrl-F: the composer takes the query (its text is kept and given back at Esc).
    func startSearch() {
        guard timeline != nil else { return }
        state.search = ChatSearch(savedComposer: state.composer)
        state.composer = ""
        state.panel = nil
        state.replyingTo = nil
    }

    /// Keys while searching: text edits the query, Enter finds the next older match, PageUp
    /// and PageDown scroll, Esc ends the search (the match stays selected, for Ctrl-R or
    /// Ctrl-T). Any other key ends it and acts as usual. True when the key was taken.
    func handleSearching(_ key: ChatKey) -> Bool {
        guard let search = state.search else { return false }
        switch key {
        case .text(let text):
            state.composer += text
            state.search?.matchId = nil
        case .paste(let text, _):
            state.composer += text.oneLine   // a query is one line
            state.search?.matchId = nil
        case .backspace:
            if !state.composer.isEmpty { state.composer.removeLast() }
            state.search?.matchId = nil
        case .enter:
            findNext()
        case .pageUp, .pageDown:
            return false
        case .escape:
            state.search = nil
            state.composer = search.savedComposer
        default:
            state.search = nil
            state.composer = search.savedComposer
            return false
        }
        return true
    }

    /// The next match older than the current one (from the newest when none) among the loaded
    /// messages; when there is none and the daemon holds older pages, asks for the next one
    /// and looks again when it comes (`continueSearch`).
    func findNext() {
        guard let search = state.search, let snapshot = timeline?.current else { return }
        let query = state.composer
        guard !query.isEmpty else { return }
        let messages = snapshot.items.filter { !$0.isLocalEcho && $0.message.contentType != ContentType.reaction }.map(\.message)
        var index = messages.count - 1
        if let current = search.matchId, let at = messages.firstIndex(where: { $0.id == current }) { index = at - 1 }
        while index >= 0 {
            if Self.matches(messages[index], query) {
                state.search?.matchId = messages[index].id
                state.search?.searchingOlder = false
                state.selectedMessageId = messages[index].id
                scrollToSelection()
                return
            }
            index -= 1
        }
        if snapshot.hasOlder {
            state.search?.searchingOlder = true
            searchWaitsFor = snapshot.generation
            timeline?.loadOlder()
        } else {
            state.search?.searchingOlder = false
            state.notice = search.matchId == nil ? "no message holds that" : "no older match: that was the oldest"
        }
    }

    /// After a snapshot: a search that waited for an older page looks again once it came.
    func continueSearch() {
        guard state.search?.searchingOlder == true, let snapshot = timeline?.current,
              !snapshot.loadingOlder, snapshot.generation > searchWaitsFor else { return }
        findNext()
    }

    static func matches(_ message: MessageInfo, _ query: String) -> Bool {
        SearchFolding.matches(message.text, query: query)
    }

    /// Scrolls so the selected message's first line is in the middle of the pane.
    func scrollToSelection() {
        guard let snapshot = timeline?.current else { return }
        let (columns, rows) = terminal.size
        let paneWidth = columns - ChatRenderer.listWidth(for: columns) - 1
        let lines = ChatRenderer.wholeLayout(snapshot, state: state, width: paneWidth).lines
        // Only a selected message's first line starts with the mark (others start with a time or an indent).
        guard let line = lines.firstIndex(where: { $0.0.hasPrefix("▸") }) else { return }
        let bodyRows = max(1, rows - 3)
        let end = min(lines.count, line + bodyRows / 2 + 1)
        state.scrollUp = max(0, lines.count - max(end, min(lines.count, bodyRows)))
    }
}
