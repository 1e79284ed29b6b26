import ControlProtocol
import SottoClient

/// Everything one frame of `sotto chat` shows, as a value: the renderer draws it and nothing
/// else, so a frame is a pure function of it (the snapshot tests build one by hand).
///
/// ```swift
/// var state = ChatState(conversations: list.conversations)
/// state.openId = state.conversations.first?.id
/// let frame = ChatRenderer.render(state, width: 80, height: 24)
/// ```
struct ChatState: Equatable {
    var conversations: [ConversationInfo] = []
    /// The conversation under the cursor in the list, which is also the open one.
    var selectedId: String?
    var timeline: TimelineSnapshot?
    var composer = ""
    /// Lines scrolled up from the newest (0: the latest message at the bottom).
    var scrollUp = 0
    var connected = true
    /// What went wrong last (shown on the status line, inert).
    var problem: String?
    /// Colour and attributes (off with NO_COLOR).
    var color = true
    /// Times are shown in this offset from UTC (seconds), so a frame does not depend on the machine's zone.
    var utcOffsetSeconds = 0
    /// The id of the message a reply quotes (Ctrl-R, then Enter sends it), nil when not replying.
    var replyingTo: String?
    /// The message selected with Ctrl-P/Ctrl-N (to reply or react to), nil when none.
    var selectedMessageId: String?

    var selectedIndex: Int? { conversations.firstIndex { $0.id == selectedId } }
    var selected: ConversationInfo? { selectedIndex.map { conversations[$0] } }
}
