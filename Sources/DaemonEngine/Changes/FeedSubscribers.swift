import DaemonLogging
import Foundation

/// The daemon's one registry of change subscribers: each a stream with an optional
/// conversation filter, optionally bound to the client connection that asked for it. Not
/// Sendable on purpose: it lives in ``ChangeFeed``, which calls `deliver` in seq order.
///
/// ```swift
/// var subscribers = FeedSubscribers()
/// let id = subscribers.add(continuation, conversationId: "c1")   // or nil: every change
/// subscribers.deliver(change)                                    // only c1's reach it
/// ```
struct FeedSubscribers {
    /// A subscriber that falls this far behind is dropped (it can resubscribe with `since`).
    static let buffer = 10_000

    private struct Entry {
        let continuation: AsyncStream<FeedChange>.Continuation
        let conversationId: String?
        var connection: ObjectIdentifier?
    }

    private var entries: [UUID: Entry] = [:]
    private var byConnection: [ObjectIdentifier: UUID] = [:]

    var count: Int { entries.count }

    mutating func add(_ continuation: AsyncStream<FeedChange>.Continuation, conversationId: String?) -> UUID {
        let id = UUID()
        entries[id] = Entry(continuation: continuation, conversationId: conversationId)
        return id
    }

    /// The subscription a client connection holds, if any.
    func connection(_ key: ObjectIdentifier) -> UUID? { byConnection[key] }

    mutating func bind(_ key: ObjectIdentifier, to id: UUID) {
        guard entries[id] != nil else { return }
        entries[id]?.connection = key
        byConnection[key] = id
    }

    /// Ends the subscriber's stream and forgets it.
    mutating func remove(_ id: UUID) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        if let key = entry.connection, byConnection[key] == id { byConnection[key] = nil }
        entry.continuation.finish()
    }

    /// Hands one applied change, read once in the feed's pass, to every subscriber that wants it.
    mutating func deliver(_ change: FeedChange) {
        for (id, entry) in entries where entry.conversationId == nil || entry.conversationId == change.conversationId {
            if case .dropped = entry.continuation.yield(change) {
                DaemonLog.warning("subscriber fell \(Self.buffer) changes behind; dropped")
                remove(id)
            }
        }
    }

    mutating func finishAll() {
        for entry in entries.values { entry.continuation.finish() }
        entries.removeAll()
        byConnection.removeAll()
    }
}
