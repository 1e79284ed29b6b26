/// Where an inbox stands in the lifecycle (the source app's decision record "Inbox Lifecycle Management").
///
/// ```swift
/// if await manager.state(of: "inbox-1") == .sleeping { ... }
/// ```
public enum InboxState: String, Sendable, Hashable, Codable {
    /// Resources are held: unlocked identity, conversation store, outbox sender, observation.
    case awake
    /// Known to the manager but holding nothing; a push or a user action wakes it.
    case sleeping
    /// Unknown to the manager (never seen, or removed with `forceRemove`).
    case notTracked
}
