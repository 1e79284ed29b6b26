/// What an awake inbox holds: the unlocked identity, its conversation store, the outbox sender
/// and the database observation. The inbox LRU calls ``activate()`` when the inbox wakes and
/// ``release()`` when it sleeps or is removed, never concurrently and always in that order.
///
/// `release()` is also called after a failed `activate()`, so it must tolerate a partial
/// activation.
///
/// ```swift
/// final class NoResources: AwakeInboxResources {
///     func activate() async throws {}
///     func release() async {}
/// }
/// let inboxLRU = InboxLRU(makeResources: { _ in NoResources() })
/// ```
public protocol AwakeInboxResources: Sendable {
    func activate() async throws
    func release() async
}

/// Builds the resources of one inbox when it wakes. Called once per wake.
public typealias AwakeInboxResourcesFactory = @Sendable (_ inboxId: String) -> any AwakeInboxResources
