/// The window of one awake conversation's newest messages that `sotto read` serves from
/// (docs/adr/0050), written through intent methods only. The change feed applies every
/// committed change to it before any subscriber hears of the change (docs/adr/0022), so a
/// client that reads on a notification finds what it was told about. Each intent returns
/// what it changed. It is not the truth of unread counts, read marks or delivery status and
/// keeps none of them: the daemon answers those from the database (`LocalStateRepository`,
/// the message rows) (docs/adr/0050, "What the window is", issue #34).
///
/// ```swift
/// let window = try ConversationWindow(conversationId: "c1")
/// try await window.append(message)                       // .appended(index: 0)
/// let changes = try await window.upsertByID(edited)      // [.updated(edited, index: 0)]
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
    public init(conversationId: String, cap: Int = ConversationWindow.defaultCap,
                history: [TimelineMessage] = []) throws(ConversationWindowError) {
        self.conversationId = conversationId
        self.cap = cap
        timeline = try ConversationTimeline(conversationId: conversationId, cap: cap,
                                            history: history)
    }

    // MARK: Reading

    public var count: Int { timeline.count }
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
        try timeline.upsert(message)
    }
}
