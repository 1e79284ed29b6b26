import ControlProtocol
import SottoClient
import Synchronization

/// The lines a timeline item was laid out as, kept by what they depend on, so a frame lays
/// out only the items it has not seen: a page up deep in a full window of 500 messages
/// otherwise wrapped and made inert every message between the view and the newest one, on
/// every key (docs/adr/0072). A stored message's text never changes under its id, except an
/// attachment's line, which shows its state (`waiting`, `fetching 40%`, `available`); a local
/// echo's id (`local-N`) is the timeline's own and starts again in each. So those two texts
/// are in the key; everything else its lines show is too.
///
/// ```swift
/// let block = ItemLinesCache.shared.lines(for: key) { ChatRenderer.lines(of: item, …) }
/// let all = ItemLinesCache.shared.wholeLayout(for: whole) { ChatRenderer.layout(timeline, …) }.lines
/// ```
final class ItemLinesCache: Sendable {
    static let shared = ItemLinesCache()

    /// Everything but the text that an item's lines show.
    struct Key: Hashable {
        var conversationId: String
        var id: String
        /// A local echo's text, or an attachment's line (its state changes under its id); nil
        /// for any other stored message, whose id is its text's.
        var changingText: String?
        var sentAtMs: Int64
        var senderName: String?
        var status: String
        var sendError: String?
        var selected: Bool
        var firstUnread: Bool
        var quoted: Bool
        var reactions: [String]
        var width: Int
        var color: Bool
        var utcOffsetSeconds: Int
    }

    /// Past this many items (four windows) the cache starts again: a bound, not a policy.
    static let capacity = 2_000

    private let entries = Mutex<[Key: [(String, String)]]>([:])

    /// What the whole timeline's lines depend on: the snapshot itself (compared in O(1) while
    /// it is the same one: an array compares its storage first) and the state they show.
    struct Whole: Equatable {
        var timeline: TimelineSnapshot
        var width: Int
        var selectedMessageId: String?
        var color: Bool
        var utcOffsetSeconds: Int
    }

    /// The two newest whole layouts: the one on screen and the one before it, which the view
    /// keeper compares with it when a page comes or goes (docs/adr/0072).
    private let wholes = Mutex<[(key: Whole, layout: TimelineLayout)]>([])

    /// The whole timeline laid out once per snapshot: a key that only scrolls slices what the
    /// last frame laid out, and a page merged measures lines below a message from it.
    func wholeLayout(for key: Whole, layout: () -> TimelineLayout) -> TimelineLayout {
        if let kept = wholes.withLock({ kept in kept.first(where: { $0.key == key })?.layout }) { return kept }
        let laid = layout()
        wholes.withLock { kept in
            kept.removeAll { $0.key == key }
            kept.append((key, laid))
            if kept.count > 2 { kept.removeFirst(kept.count - 2) }
        }
        return laid
    }

    func lines(for key: Key, layout: () -> [(String, String)]) -> [(String, String)] {
        if let cached = entries.withLock({ $0[key] }) { return cached }
        let laid = layout()
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = laid
        }
        return laid
    }
}

/// A timeline laid out: its lines, and for each laid-out item the line just after its block,
/// so the lines below a message are `lines.count - end[id]` without laying out again.
///
/// ```swift
/// let laid = ChatRenderer.layout(snapshot, state: state, width: 53)
/// let below = laid.linesBelow("msg-id")  // nil when the item is not laid out
/// ```
struct TimelineLayout {
    var lines: [(String, String)] = []
    var end: [String: Int] = [:]

    func linesBelow(_ id: String) -> Int? { end[id].map { lines.count - $0 } }
}
