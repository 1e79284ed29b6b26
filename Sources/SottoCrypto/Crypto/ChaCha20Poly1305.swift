import CSodium

/// ChaCha20-Poly1305 AEAD, IETF variant (RFC 8439: 12-byte nonce, 16-byte tag), libsodium.
///
/// ```swift
/// let sealed = try ChaCha20Poly1305.seal(plain, key: key, nonce: nonce, aad: aad)   // ciphertext || tag
/// let plain2 = try ChaCha20Poly1305.open(sealed, key: key, nonce: nonce, aad: aad)
/// ```
public enum ChaCha20Poly1305 {
    public static let keyByteCount = SodiumAEAD.keyByteCount
    public static let nonceByteCount = 12
    public static let tagByteCount = SodiumAEAD.tagByteCount

    static let aead = SodiumAEAD(nonceByteCount: nonceByteCount,
                                 encrypt: crypto_aead_chacha20poly1305_ietf_encrypt,
                                 decrypt: crypto_aead_chacha20poly1305_ietf_decrypt)

    /// Returns ciphertext followed by the tag.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws(CryptoError) -> [UInt8] {
        try SodiumAEAD.borrowing(key[...]) { key throws(CryptoError) in try aead.seal(plaintext[...], key: key, nonce: nonce[...], aad: aad[...]) }
    }

    /// Opens ciphertext || tag; `authenticationFailed` when the tag, key, nonce or AAD do not match.
    public static func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws(CryptoError) -> [UInt8] {
        try SodiumAEAD.borrowing(key[...]) { key throws(CryptoError) in try aead.open(sealed[...], key: key, nonce: nonce[...], aad: aad[...]) }
    }
}
