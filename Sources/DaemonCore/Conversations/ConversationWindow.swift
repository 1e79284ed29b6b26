/// The window of one awake conversation's newest messages that `sotto read` serves from
/// (docs/adr/0050), written through intent methods only. The change feed applies every
/// committed change to it before any subscriber hears of the change (docs/adr/0022), so a
/// client that reads on a notification finds what it was told about. Each intent returns
/// what it changed. It is not the truth of unread counts, read marks or delivery status:
/// the daemon answers those from the database (`LocalStateRepository`, the message rows);
/// the read mark it keeps only counts what `sotto read` has not shown yet (docs/adr/0050,
/// "What the window is", issue #34).
///
/// ```swift
/// let window = try ConversationWindow(conversationId: "c1")
/// try await window.append(message)                       // .appended(index: 0)
/// let changes = await window.markAllRead()               // [.unreadChanged(count: 0)]
/// ```
public actor ConversationWindow {
    /// The newest messages an awake conversation keeps in memory (about 1.2 KB each, and up to
    /// 1.125 × the cap before the dropped ones are compacted: at most ~27 MB for 20 awake
    /// conversations, against ~480 MB at 10,000); a read deeper than this goes to the
    /// database (docs/adr/0050, 0053).
    public static let defaultCap = 1_000

    public nonisolated let conversationId: String
    /// Most messages kept; the oldest beyond it are dropped (they stay in the database).
    public nonisolated let cap: Int
    private var timeline: ConversationTimeline

    /// - Parameters:
    ///   - cap: most messages kept in memory; the oldest beyond it are dropped.
    ///   - history: what the database holds, loaded once at wake (sorted here).
    ///   - readMarker: the persisted read position, if any.
    public init(conversationId: String, cap: Int = ConversationWindow.defaultCap,
                history: [TimelineMessage] = [], readMarker: TimelinePosition? = nil) throws(ConversationWindowError) {
        self.conversationId = conversationId
        self.cap = cap
        timeline = try ConversationTimeline(conversationId: conversationId, cap: cap,
                                            history: history, readMarker: readMarker)
    }

    // MARK: Reading

    public var count: Int { timeline.count }
    public var unreadCount: Int { timeline.unreadCount }
    public var readMarker: TimelinePosition? { timeline.readMarker }
    public var messages: [TimelineMessage] { Array(timeline.messages) }
    public func message(id: String) -> TimelineMessage? { timeline.message(id: id) }

    // MARK: Intents

    /// Adds a new message; a known id is ignored (`.duplicate`).
    @discardableResult
    public func append(_ message: TimelineMessage) throws(ConversationWindowError) -> AppendOutcome {
        try timeline.append(message).0
    }

    /// Adds the message, or replaces the one with the same id.
    @discardableResult
    public func upsertByID(_ message: TimelineMessage) throws(ConversationWindowError) -> [ConversationChange] {
        let before = timeline.unreadCount
        return withUnread(try timeline.upsert(message), before: before)
    }

    /// Everything up to and including message `id` is read. Never moves the marker backwards.
    @discardableResult
    public func markRead(upTo id: String) -> [ConversationChange] {
        let before = timeline.unreadCount
        return withUnread(timeline.markRead(upTo: id), before: before)
    }

    @discardableResult
    public func markAllRead() -> [ConversationChange] {
        let before = timeline.unreadCount
        return withUnread(timeline.markAllRead(), before: before)
    }

    /// The timeline changes, then at most one `.unreadChanged` per intent.
    private func withUnread(_ changes: [ConversationChange], before: Int) -> [ConversationChange] {
        timeline.unreadCount == before ? changes : changes + [.unreadChanged(count: timeline.unreadCount)]
    }
}
