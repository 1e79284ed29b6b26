import SottoWire
import SottoClient

/// The timeline holds a window of pages (docs/adr/0069): paging up far drops its newest
/// pages, paging back down reads them again. What a person sees must not move when that
/// happens, so the view is kept on the newest message both snapshots hold.
///
/// ```swift
/// let previous = state.timeline
/// state.timeline = timeline?.current
/// keepViewInPlace(from: previous)
/// ```
extension ChatApp {
    /// After a new snapshot: when the view is scrolled up (or the timeline is away from
    /// the latest page), `scrollUp` moves by as many lines as came or went below the newest
    /// message both snapshots hold, so the lines on screen stay where they were.
    func keepViewInPlace(from previous: TimelineSnapshot?) {
        guard let previous, let current = state.timeline, previous.conversationId == current.conversationId,
              previous.generation != current.generation, state.scrollUp > 0 || previous.hasNewer else { return }
        let currentIds = Set(current.items.map(\.id))
        guard let anchor = previous.items.last(where: { currentIds.contains($0.id) && $0.message.contentType != ContentType.reaction })
        else { return }
        let width = paneWidth
        let shift = linesBelow(anchor.id, in: current, width: width) - linesBelow(anchor.id, in: previous, width: width)
        state.scrollUp = max(0, state.scrollUp + shift)
    }

    /// Page down near the newest loaded message of a timeline away from the latest page
    /// reads the next newer page.
    func loadNewerIfNeeded(rows: Int) {
        guard let snapshot = timeline?.current, snapshot.hasNewer, state.scrollUp < rows else { return }
        timeline?.loadNewer()
    }

    /// After a new snapshot: messages that came below a view scrolled up (the latest page
    /// loaded, before and after) are counted for the "↓ N new" indicator; back at the bottom,
    /// nothing is out of view.
    func countNewBelow(from previous: TimelineSnapshot?) {
        guard let current = state.timeline, !current.hasNewer else { return }
        if state.scrollUp == 0 {
            state.newBelow = 0
            return
        }
        guard let previous, previous.conversationId == current.conversationId, !previous.hasNewer,
              previous.generation != current.generation,
              let newest = previous.items.last(where: { !$0.isLocalEcho }) else { return }
        let known = Set(previous.items.map(\.id))
        state.newBelow += current.items.count(where: { item in
            !known.contains(item.id) && !item.isLocalEcho && item.message.contentType != ContentType.reaction
                && (item.message.sentAtMs, item.id) > (newest.message.sentAtMs, newest.id)
        })
    }

    /// End: the latest page at the bottom of the view, whatever came while scrolled back.
    func showLatest() {
        timeline?.showLatest()
        state.scrollUp = 0
        state.newBelow = 0
    }

    private var paneWidth: Int {
        let columns = terminal.size.columns
        return columns - ChatRenderer.listWidth(for: columns) - 1
    }

    /// From the whole layouts the frames drew (kept for the last two snapshots), so a page
    /// merged lays out only the new snapshot, once, for the frame that follows anyway.
    private func linesBelow(_ id: String, in snapshot: TimelineSnapshot, width: Int) -> Int {
        ChatRenderer.wholeLayout(snapshot, state: state, width: width).linesBelow(id) ?? 0
    }
}
