/// A freshly generated inbox identity that no conversation uses yet. Its description never
/// shows the key, so it is safe in logs and test failures.
///
/// ```swift
/// let identity = PreparedIdentity(inboxId: "3f0c...", privateKey: SecureRandom.bytes(32))
/// print(identity)   // PreparedIdentity(inboxId: 3f0c..., privateKey: <32 bytes redacted>)
/// ```
public struct PreparedIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    public var inboxId: String
    public var privateKey: [UInt8]
    public var createdAtMs: Int64

    public init(inboxId: String, privateKey: [UInt8], createdAtMs: Int64 = 0) {
        self.inboxId = inboxId
        self.privateKey = privateKey
        self.createdAtMs = createdAtMs
    }

    public var description: String {
        "PreparedIdentity(inboxId: \(inboxId), privateKey: <\(privateKey.count) bytes redacted>)"
    }
}

/// Persistent storage for the single unused-identity slot (the real one is the keystore).
///
/// ```swift
/// actor MemoryVault: IdentityVault {
///     var slot: PreparedIdentity?
///     func loadUnusedIdentity() -> PreparedIdentity? { slot }
///     func storeUnusedIdentity(_ identity: PreparedIdentity?) { slot = identity }
/// }
/// ```
public protocol IdentityVault: Sendable {
    /// The identity in the slot, or nil when it is empty.
    func loadUnusedIdentity() async throws -> PreparedIdentity?
    /// Fills the slot, or empties it with nil. Must be durable when it returns.
    func storeUnusedIdentity(_ identity: PreparedIdentity?) async throws
}

/// A vault that lives only as long as the process: for tests and benchmarks.
///
/// ```swift
/// let cache = UnusedInboxCache(vault: InMemoryIdentityVault()) { try await makeIdentity() }
/// ```
public actor InMemoryIdentityVault: IdentityVault {
    private var slot: PreparedIdentity?
    public init(slot: PreparedIdentity? = nil) { self.slot = slot }
    public func loadUnusedIdentity() -> PreparedIdentity? { slot }
    public func storeUnusedIdentity(_ identity: PreparedIdentity?) { slot = identity }
}
