import SottoCrypto

/// Persistent storage for the single unused-identity slot (the real one is the keystore).
///
/// ```swift
/// let vault: any IdentityVault = KeystoreIdentityVault(keystore: keystore)
/// try await vault.storeUnusedIdentity(Identity.generate())   // fill the slot
/// if let ready = try await vault.loadUnusedIdentity() {
///     try await vault.claimUnusedIdentity(ready)             // now a regular identity
/// }
/// ```
public protocol IdentityVault: Sendable {
    /// The identity in the slot, or nil when it is empty.
    func loadUnusedIdentity() async throws -> Identity?
    /// Fills the slot, or empties it with nil. Must be durable when it returns.
    func storeUnusedIdentity(_ identity: Identity?) async throws
    /// Makes the slot's identity (`identity`) a regular stored identity and empties the slot,
    /// durably: what a consume that hit does.
    func claimUnusedIdentity(_ identity: Identity) async throws
    /// Durably stores a freshly generated identity as a regular one: what a consume that
    /// missed does.
    func storeIdentity(_ identity: Identity) async throws
}

/// A vault that lives only as long as the process: for tests and benchmarks.
///
/// ```swift
/// let cache = UnusedInboxCache(vault: InMemoryIdentityVault()) { try await makeIdentity() }
/// ```
public actor InMemoryIdentityVault: IdentityVault {
    private var slot: Identity?
    /// The inboxIds handed out as regular identities, in order.
    public private(set) var storedInboxIds: [String] = []
    public init(slot: Identity? = nil) { self.slot = slot }
    public func loadUnusedIdentity() -> Identity? { slot }
    public func storeUnusedIdentity(_ identity: Identity?) { slot = identity }
    public func claimUnusedIdentity(_ identity: Identity) {
        if slot?.inboxId == identity.inboxId { slot = nil }
        storedInboxIds.append(identity.inboxId)
    }
    public func storeIdentity(_ identity: Identity) { storedInboxIds.append(identity.inboxId) }
}
