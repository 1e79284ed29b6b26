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
    /// Messages that came below the view while it was scrolled up with the latest page
    /// loaded (those that came while the window was away from it: `TimelineSnapshot.newerArrived`).
    var newBelow = 0
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

    /// A destructive action waiting for its confirmation (the composer takes the typed name meanwhile).
    var confirmation: PendingConfirmation?
    /// Text shown over the body until Esc or the next command: `/help`, an invite code.
    var panel: ChatPanel?
    /// The outcome of the last action, on the status line until the next key.
    var notice: String?
    /// Ctrl-F's search in the open conversation, while it runs.
    var search: ChatSearch?

    var selectedIndex: Int? { conversations.firstIndex { $0.id == selectedId } }
    /// How many new messages the "↓ N new" indicator counts: what came while scrolled back.
    var newMessagesOutOfView: Int { newBelow + (timeline.map { $0.hasNewer ? $0.newerArrived : 0 } ?? 0) }
    var selected: ConversationInfo? { selectedIndex.map { conversations[$0] } }
}

/// A destructive action (leave, remove, explode) asked for and not yet done: it is done only
/// when exactly `expected` is typed and Enter pressed; anything else, or Esc, does nothing.
/// The target is fixed when it is asked for, so moving in the list cannot redirect it.
///
/// ```swift
/// state.confirmation = PendingConfirmation(action: .explode(conversation: id, atMs: nil), expected: "Trip",
///                                   question: "Explode Trip on every device?", verb: "explode")
/// ```
struct PendingConfirmation: Equatable {
    enum Action: Equatable {
        case leave(conversation: String)
        case remove(member: String, conversation: String)
        case explode(conversation: String, atMs: Int64?)
    }
    var action: Action
    /// What must be typed (shown inert: it may be a name another device chose).
    var expected: String
    /// The status line's question.
    var question: String
    /// The composer's prompt word.
    var verb: String
    /// The composer's text before the question, given back after it.
    var savedComposer = ""
}

/// Lines shown over the conversation panes until Esc: the help, an invite code to copy.
///
/// ```swift
/// state.panel = ChatPanel(title: "Invite to Trip", lines: [code])
/// ```
struct ChatPanel: Equatable {
    var title: String
    var lines: [String]
}

/// The search in the open conversation (Ctrl-F): the query typed so far, the message the last
/// Enter found, and whether it is waiting for an older page to look further.
///
/// ```swift
/// state.search = ChatSearch()
/// ```
struct ChatSearch: Equatable {
    var query = ""
    var matchId: String?
    /// Looking in older pages the daemon is asked for.
    var searchingOlder = false
    /// The composer's text before the search, given back after it.
    var savedComposer = ""
}
