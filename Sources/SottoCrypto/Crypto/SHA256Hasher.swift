import CSodium

/// SHA-256 over bytes that arrive in pieces (libsodium's streaming state): a 100 MiB file is
/// hashed as it is read, never held.
///
/// ```swift
/// var hasher = SHA256Hasher()
/// hasher.update(firstPart)
/// hasher.update(secondPart)
/// let digest = hasher.finalize()    // SHA256.hash(firstPart + secondPart)
/// ```
public struct SHA256Hasher: Sendable {
    private var state = crypto_hash_sha256_state()

    public init() {
        Sodium.ensureInitialized()
        crypto_hash_sha256_init(&state)
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        crypto_hash_sha256_update(&state, base.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
    }

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest of everything given; the hasher is spent after this.
    public mutating func finalize() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: SHA256.byteCount)
        crypto_hash_sha256_final(&state, &out)
        return out
    }
}
