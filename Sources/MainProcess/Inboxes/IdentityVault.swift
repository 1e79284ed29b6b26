import SharedStore

/// Persistent storage for the single unused-identity slot (the real one is the keystore).
///
/// ```swift
/// actor MemoryVault: IdentityVault {
///     var slot: Identity?
///     func loadUnusedIdentity() -> Identity? { slot }
///     func storeUnusedIdentity(_ identity: Identity?) { slot = identity }
/// }
/// ```
public protocol IdentityVault: Sendable {
    /// The identity in the slot, or nil when it is empty.
    func loadUnusedIdentity() async throws -> Identity?
    /// Fills the slot, or empties it with nil. Must be durable when it returns.
    func storeUnusedIdentity(_ identity: Identity?) async throws
}

/// A vault that lives only as long as the process: for tests and benchmarks.
///
/// ```swift
/// let cache = UnusedInboxCache(vault: InMemoryIdentityVault()) { try await makeIdentity() }
/// ```
public actor InMemoryIdentityVault: IdentityVault {
    private var slot: Identity?
    public init(slot: Identity? = nil) { self.slot = slot }
    public func loadUnusedIdentity() -> Identity? { slot }
    public func storeUnusedIdentity(_ identity: Identity?) { slot = identity }
}
