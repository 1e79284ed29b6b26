/// The single source of truth for one awake conversation: its timeline, id index and unread
/// count, written through intent methods only, and observed through per-conversation change
/// streams. Writes to another conversation's store never reach this store's subscribers.
///
/// ```swift
/// let store = try ConversationStore(conversationId: "c1")
/// let subscription = await store.subscribe()          // snapshot + changes, with no gap
/// try await store.append(message)
/// for await change in subscription.changes { render(change) }
/// ```
public actor ConversationStore {
    /// The timeline as it was when subscribing, and every change after it, in order.
    public struct Subscription: Sendable {
        public var messages: [TimelineMessage]
        public var unreadCount: Int
        public var changes: AsyncStream<ConversationChange>
    }

    public static let defaultCap = 10_000

    public nonisolated let conversationId: String
    private var timeline: ConversationTimeline
    private var subscribers: [Int: AsyncStream<ConversationChange>.Continuation] = [:]
    private var nextSubscriberId = 0
    private var isClosed = false

    /// - Parameters:
    ///   - cap: most messages kept in memory; the oldest beyond it are dropped.
    ///   - history: what the database holds, loaded once at wake (sorted here).
    ///   - readMarker: the persisted read position, if any.
    public init(conversationId: String, cap: Int = ConversationStore.defaultCap,
                history: [TimelineMessage] = [], readMarker: TimelinePosition? = nil) throws(ConversationStoreError) {
        self.conversationId = conversationId
        timeline = try ConversationTimeline(conversationId: conversationId, cap: cap,
                                            history: history, readMarker: readMarker)
    }

    // MARK: Reading

    public var count: Int { timeline.count }
    public var unreadCount: Int { timeline.unreadCount }
    public var readMarker: TimelinePosition? { timeline.readMarker }
    public var messages: [TimelineMessage] { Array(timeline.messages) }
    public func message(id: String) -> TimelineMessage? { timeline.message(id: id) }

    /// A snapshot and the stream of every change after it. The stream ends when the
    /// conversation sleeps (``close()``) or the subscriber stops iterating.
    public func subscribe() -> Subscription {
        let (stream, continuation) = AsyncStream.makeStream(of: ConversationChange.self)
        if isClosed {
            continuation.finish()
        } else {
            let id = nextSubscriberId
            nextSubscriberId += 1
            subscribers[id] = continuation
            continuation.onTermination = { [weak self] _ in
                Task { await self?.unsubscribe(id) }
            }
        }
        return Subscription(messages: Array(timeline.messages), unreadCount: timeline.unreadCount, changes: stream)
    }

    public var subscriberCount: Int { subscribers.count }

    // MARK: Intents

    /// Adds a new message; a known id is ignored (`.duplicate`).
    @discardableResult
    public func append(_ message: TimelineMessage) throws(ConversationStoreError) -> AppendOutcome {
        let before = timeline.unreadCount
        let (outcome, changes) = try timeline.append(message)
        publish(changes, unreadBefore: before)
        return outcome
    }

    /// Adds the message, or replaces the one with the same id.
    public func upsertByID(_ message: TimelineMessage) throws(ConversationStoreError) {
        let before = timeline.unreadCount
        publish(try timeline.upsert(message), unreadBefore: before)
    }

    /// Returns false when no message has this id.
    @discardableResult
    public func setDeliveryStatus(_ id: String, _ status: DeliveryStatus) -> Bool {
        guard timeline.index(of: id) != nil else { return false }
        publish(timeline.setDeliveryStatus(id: id, status), unreadBefore: timeline.unreadCount)
        return true
    }

    /// Everything up to and including message `id` is read. Never moves the marker backwards.
    public func markRead(upTo id: String) {
        let before = timeline.unreadCount
        publish(timeline.markRead(upTo: id), unreadBefore: before)
    }

    public func markAllRead() {
        let before = timeline.unreadCount
        publish(timeline.markAllRead(), unreadBefore: before)
    }

    /// The newest incoming message becomes unread again (unread count 1).
    public func markUnread() {
        let before = timeline.unreadCount
        publish(timeline.markUnread(), unreadBefore: before)
    }

    public func clear() {
        let before = timeline.unreadCount
        publish(timeline.clear(), unreadBefore: before)
    }

    /// Ends every subscriber's stream; the registry calls it when the conversation sleeps.
    public func close() {
        isClosed = true
        let ending = subscribers.values
        subscribers.removeAll()
        for continuation in ending { continuation.finish() }
    }

    // MARK: Subscribers

    /// Sends the timeline changes, then at most one `.unreadChanged` per intent.
    private func publish(_ changes: [ConversationChange], unreadBefore: Int) {
        var changes = changes
        if timeline.unreadCount != unreadBefore { changes.append(.unreadChanged(count: timeline.unreadCount)) }
        guard !changes.isEmpty else { return }
        for continuation in subscribers.values {
            for change in changes { continuation.yield(change) }
        }
    }

    private func unsubscribe(_ id: Int) { subscribers[id] = nil }
}
