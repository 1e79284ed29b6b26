/// Where an inbox stands in the inbox LRU (the source app's decision record "Inbox Lifecycle Management").
///
/// ```swift
/// if await inboxLRU.state(of: "inbox-1") == .sleeping { ... }
/// ```
public enum InboxState: String, Sendable, Hashable, Codable {
    /// Resources are held: unlocked identity, conversation store, outbox sender, observation.
    case awake
    /// Known to the inbox LRU but holding nothing; a push or a user action wakes it.
    case sleeping
    /// Unknown to the inbox LRU (never seen, or removed with `forceRemove`).
    case notTracked
}
