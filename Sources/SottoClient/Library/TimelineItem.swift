import ControlProtocol

/// One entry of a `Timeline`: a message the daemon holds, or the local echo of one this
/// device is sending, shown at once as `pending` until the daemon names it.
///
/// ```swift
/// let status = item.isLocalEcho ? "sending" : item.message.deliveryStatus   // pending/relayed/sent/delivered/failed/received
/// ```
public struct TimelineItem: Sendable, Equatable, Identifiable {
    /// The message id, or `local-N` for an echo the daemon has not answered yet.
    public var id: String { message.id }
    /// The message as the daemon describes it (for an echo: what this device is sending).
    public var message: MessageInfo
    /// Shown before the daemon stored it.
    public var isLocalEcho: Bool
    /// Why sending it failed (an echo only): shown with `failed`.
    public var sendError: String?

    public init(message: MessageInfo, isLocalEcho: Bool = false, sendError: String? = nil) {
        self.message = message
        self.isLocalEcho = isLocalEcho
        self.sendError = sendError
    }

    /// The status to show: the daemon's, `pending` for an echo, `failed` when sending failed.
    public var deliveryStatus: String { sendError != nil ? "failed" : message.deliveryStatus }
}

/// What a `Timeline` holds at one moment: the loaded items, oldest first, and where it stands.
///
/// ```swift
/// for item in snapshot.items { print(item.message.text, item.deliveryStatus) }
/// if snapshot.hasOlder { timeline.loadOlder() }
/// ```
public struct TimelineSnapshot: Sendable, Equatable {
    public var conversationId: String
    public var items: [TimelineItem] = []
    /// False once a page came back shorter than asked: the start of the conversation is loaded.
    public var hasOlder = true
    public var loadingOlder = false
    /// True when paging up dropped newer pages from the window: `Timeline.loadNewer` reads them.
    public var hasNewer = false
    public var loadingNewer = false
    /// Messages (reactions included) inserted in the conversation while `hasNewer`: what came
    /// that the window does not show. 0 again once the latest page is loaded.
    public var newerArrived = 0
    /// The first message that was unread when the timeline opened (where a "new" marker goes).
    public var firstUnreadId: String?
    /// False until the first load, and while the daemon is unreachable.
    public var connected = false
    public var problem: String?
    /// How many times the snapshot changed (tests and benchmarks wait on it).
    public var generation = 0

    public init(conversationId: String) { self.conversationId = conversationId }
}
