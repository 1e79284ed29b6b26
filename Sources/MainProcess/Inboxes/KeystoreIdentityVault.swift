import SharedStore

/// The real vault for the unused inbox: the keystore's unused slot (`keystore/unused.identity`,
/// sealed like every identity file), so a prepared identity survives a restart.
///
/// ```swift
/// let cache = UnusedInboxCache(vault: KeystoreIdentityVault(keystore: keystore)) { Identity.generate() }
/// ```
struct KeystoreIdentityVault: IdentityVault {
    let keystore: Keystore

    func loadUnusedIdentity() async throws -> Identity? {
        try keystore.peekUnused()
    }

    func storeUnusedIdentity(_ identity: Identity?) async throws {
        if let identity {
            try keystore.storeUnused(identity)
        } else {
            _ = try keystore.takeUnused()
        }
    }
}
