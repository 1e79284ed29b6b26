/// The ordered messages of one conversation with an id index kept in step, as a plain value
/// type (``ConversationWindow`` confines it to an actor). Every write returns the timeline
/// changes it made. It keeps no read mark and no unread count: those are the database's
/// (docs/adr/0050, "What the window is").
///
/// Costs: appending the newest message is O(1) amortised; an out-of-order message is a binary
/// search plus one array insert; lookups by id are a hash lookup plus a binary search (the
/// index maps id → send time, so inserts never rewrite it). Dropping the oldest message beyond
/// the cap advances a head offset; the array is compacted once the dead prefix reaches an
/// eighth of the live part (at least 32), so memory stays within 1.125 × the cap plus 32
/// messages, and each drop moves 8 messages on average (docs/adr/0053).
///
/// ```swift
/// var timeline = ConversationTimeline(conversationId: "c1", cap: 10_000)
/// let (outcome, changes) = try timeline.append(message)
/// ```
public struct ConversationTimeline {
    let conversationId: String
    let cap: Int
    private var items: [TimelineMessage] = []
    /// `items[head...]` is the live timeline; below it are dropped messages awaiting compaction.
    private var head = 0
    private var sentAtById: [String: Int64] = [:]

    init(conversationId: String, cap: Int) throws(ConversationWindowError) {
        guard cap >= 1 else { throw .invalidCap(cap) }
        self.conversationId = conversationId
        self.cap = cap
    }

    /// Loads history once at wake: sorted and deduplicated here, the newest `cap` kept.
    public init(conversationId: String, cap: Int, history: [TimelineMessage]) throws(ConversationWindowError) {
        try self.init(conversationId: conversationId, cap: cap)
        for message in history where message.conversationId != conversationId {
            throw .wrongConversation(expected: conversationId, got: message.conversationId)
        }
        var seen = Set<String>()
        let unique = history.filter { seen.insert($0.id).inserted }
        let kept = unique.sorted { $0.sortKey < $1.sortKey }.suffix(cap)
        // Room to grow, so the first messages after a wake do not copy the whole history.
        let headroom = Swift.max(256, kept.count / 4)
        items.reserveCapacity(kept.count + headroom)
        items.append(contentsOf: kept)
        sentAtById.reserveCapacity(kept.count + headroom)
        for message in items { sentAtById[message.id] = message.sentAtMs }
    }

    // MARK: Reading

    var count: Int { items.count - head }
    /// Messages held in memory: the window and the dropped ones not yet compacted away.
    var heldCount: Int { items.count }
    var messages: ArraySlice<TimelineMessage> { items[head...] }

    func message(id: String) -> TimelineMessage? {
        index(of: id).map { items[head + $0] }
    }

    /// Position of a message in the live timeline.
    func index(of id: String) -> Int? {
        guard let sentAtMs = sentAtById[id] else { return nil }
        let position = lowerBound(TimelinePosition(sentAtMs: sentAtMs, messageId: id))
        return position < count && items[head + position].id == id ? position : nil
    }

    // MARK: Writing

    public mutating func append(_ message: TimelineMessage) throws(ConversationWindowError) -> (AppendOutcome, [ConversationChange]) {
        try checkConversation(message)
        guard sentAtById[message.id] == nil else { return (.duplicate, []) }
        return insertNew(message)
    }

    /// Inserts a new message or replaces the one with the same id (moving it if its send time
    /// changed).
    mutating func upsert(_ message: TimelineMessage) throws(ConversationWindowError) -> [ConversationChange] {
        try checkConversation(message)
        guard let index = index(of: message.id) else { return insertNew(message).1 }
        let old = items[head + index]
        if old.sentAtMs == message.sentAtMs {
            guard old != message else { return [] }
            items[head + index] = message
            return [.updated(message, index: index)]
        }
        var changes = removeAt(index)
        changes += insertNew(message).1
        return changes
    }

    // MARK: Internals

    private func checkConversation(_ message: TimelineMessage) throws(ConversationWindowError) {
        guard message.conversationId == conversationId else {
            throw .wrongConversation(expected: conversationId, got: message.conversationId)
        }
    }

    private mutating func insertNew(_ message: TimelineMessage) -> (AppendOutcome, [ConversationChange]) {
        let key = message.sortKey
        var changes: [ConversationChange] = []
        if count >= cap {
            if key < items[head].sortKey { return (.olderThanCap, []) }
            changes += removeAt(0)
        }
        let index: Int
        if count == 0 || items[items.count - 1].sortKey < key {
            items.append(message)
            index = count - 1
        } else {
            index = lowerBound(key)
            items.insert(message, at: head + index)
        }
        sentAtById[message.id] = message.sentAtMs
        changes.append(.appended(message, index: index))
        return (.appended(index: index), changes)
    }

    private mutating func removeAt(_ index: Int) -> [ConversationChange] {
        let removed = items[head + index]
        if index == 0 {
            head += 1
            compactIfWorthIt()
        } else {
            items.remove(at: head + index)
        }
        sentAtById[removed.id] = nil
        return [.removed(messageId: removed.id, index: index)]
    }

    private mutating func compactIfWorthIt() {
        if head >= 32, head * 8 >= count {
            items.removeFirst(head)
            head = 0
        }
    }

    /// First live position whose key is not less than `key`.
    private func lowerBound(_ key: TimelinePosition) -> Int {
        var low = head
        var high = items.count
        while low < high {
            let mid = low + (high - low) / 2
            if items[mid].sortKey < key { low = mid + 1 } else { high = mid }
        }
        return low - head
    }
}
