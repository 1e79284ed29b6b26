import DaemonCore
import SottoCrypto

/// The real vault for the unused inbox: the keystore's unused slot (`keystore/unused.identity`,
/// sealed like every identity file), so a prepared identity survives a restart.
///
/// ```swift
/// let cache = UnusedInboxCache(vault: KeystoreIdentityVault(keystore: keystore)) { Identity.generate() }
/// ```
public struct KeystoreIdentityVault: IdentityVault {
    let keystore: Keystore

    public init(keystore: Keystore) { self.keystore = keystore }

    public func loadUnusedIdentity() async throws -> Identity? {
        try keystore.peekUnused()
    }

    /// One link and one alias (2 fsyncs) instead of taking the slot and saving anew (6).
    public func claimUnusedIdentity(_ identity: Identity) async throws {
        if try keystore.claimUnused(expectedInboxId: identity.inboxId) == nil {
            // The slot was emptied or refilled behind our back: store the identity directly.
            try keystore.save(identity)
        }
    }

    public func storeIdentity(_ identity: Identity) async throws {
        try keystore.save(identity)
    }

    public func storeUnusedIdentity(_ identity: Identity?) async throws {
        if let identity {
            try keystore.storeUnused(identity)
        } else {
            _ = try keystore.takeUnused()
        }
    }
}
