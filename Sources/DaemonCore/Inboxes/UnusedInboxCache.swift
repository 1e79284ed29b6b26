import SottoCrypto

/// Why the unused-inbox cache could not hand out an identity. Type names only, no key bytes.
///
/// ```swift
/// catch UnusedInboxError.generationFailed(let type) { log("identity generation: \(type)") }
/// ```
public enum UnusedInboxError: Error, Sendable, Equatable {
    case generationFailed(errorType: String)
    case vaultUnavailable(errorType: String)
}

/// Keeps one pre-created identity ready, so creating a conversation does not wait for key
/// generation and registration. `consume()` takes it at once and refills the slot in the
/// background; when the slot is empty it creates one on the spot. The slot lives in the vault,
/// so a prepared identity survives a restart. An identity is removed from the vault before it
/// is returned: a crash can lose a prepared identity but never hand the same one out twice.
///
/// ```swift
/// let cache = UnusedInboxCache(vault: keystoreVault) { try await IdentityFactory.create() }
/// let identity = try await cache.consume()     // ready at once on a hit
/// ```
public actor UnusedInboxCache {
    /// How consumes were served since start, for `sotto status`.
    public struct Stats: Sendable, Equatable {
        public var hits = 0
        public var misses = 0
        /// Type name of the last background replenish failure, if any.
        public var lastReplenishError: String?
    }

    public typealias Generator = @Sendable () async throws -> Identity

    private let vault: any IdentityVault
    private let generate: Generator
    private var slot: Identity?
    private var loaded = false
    private var replenishing: Task<Void, any Error>?
    public private(set) var stats = Stats()

    public init(vault: any IdentityVault, generate: @escaping Generator) {
        self.vault = vault
        self.generate = generate
    }

    // MARK: Consuming

    /// The prepared identity if there is one (then a background replenish starts), otherwise
    /// a newly generated one. Either way the returned identity is durably stored in the vault
    /// as a regular identity and the slot no longer holds it.
    public func consume() async throws -> Identity {
        try await loadIfNeeded()
        if let identity = slot {
            slot = nil                       // before any await: a concurrent consume cannot take it too
            do {
                try await vault.claimUnusedIdentity(identity)
            } catch {
                if slot == nil { slot = identity }
                throw UnusedInboxError.vaultUnavailable(errorType: Self.typeName(error))
            }
            stats.hits += 1
            startReplenish()
            return identity
        }
        stats.misses += 1
        let identity = try await generateIdentity()
        do {
            try await vault.storeIdentity(identity)
        } catch {
            throw UnusedInboxError.vaultUnavailable(errorType: Self.typeName(error))
        }
        startReplenish()
        return identity
    }

    /// Whether an identity is ready right now (loads the slot from the vault on first use).
    public func hasPreparedIdentity() async throws -> Bool {
        try await loadIfNeeded()
        return slot != nil
    }

    // MARK: Replenishing

    /// Fills the slot if it is empty and waits until it is (joins a replenish already running).
    public func replenish() async throws {
        try await ensureReplenishing().value
    }

    private func startReplenish() {
        _ = ensureReplenishing()
    }

    /// The running refill, or a new one. The task runs on this actor and clears the handle
    /// itself before anyone awaiting it resumes, so a finished refill never blocks the next.
    private func ensureReplenishing() -> Task<Void, any Error> {
        if let running = replenishing { return running }
        let task = Task {
            defer { self.replenishing = nil }
            do {
                try await self.fillSlot()
            } catch {
                self.recordReplenishFailure(error)
                throw error
            }
        }
        replenishing = task
        return task
    }

    private func recordReplenishFailure(_ error: any Error) {
        stats.lastReplenishError = (error as? UnusedInboxError).map { "\($0)" } ?? Self.typeName(error)
    }

    private func fillSlot() async throws {
        try await loadIfNeeded()
        guard slot == nil else { return }
        let identity = try await generateIdentity()
        do {
            try await vault.storeUnusedIdentity(identity)
        } catch {
            throw UnusedInboxError.vaultUnavailable(errorType: Self.typeName(error))
        }
        slot = identity
    }

    // MARK: Helpers

    private func loadIfNeeded() async throws {
        guard !loaded else { return }
        let stored: Identity?
        do {
            stored = try await vault.loadUnusedIdentity()
        } catch {
            throw UnusedInboxError.vaultUnavailable(errorType: Self.typeName(error))
        }
        if !loaded {
            slot = stored
            loaded = true
        }
    }

    private func generateIdentity() async throws -> Identity {
        do {
            return try await generate()
        } catch {
            throw UnusedInboxError.generationFailed(errorType: Self.typeName(error))
        }
    }

    private static func typeName(_ error: any Error) -> String { String(describing: type(of: error)) }
}
