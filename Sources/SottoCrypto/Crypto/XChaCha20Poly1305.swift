import CSodium

/// XChaCha20-Poly1305 AEAD (libsodium's IETF construction: 24-byte nonce, 16-byte tag). The
/// nonce is long enough to be drawn at random for every message under one key.
///
/// ```swift
/// let nonce = SecureRandom.bytes(XChaCha20Poly1305.nonceByteCount)
/// let sealed = try XChaCha20Poly1305.seal(plain, key: key, nonce: nonce, aad: aad)   // ciphertext || tag
/// ```
public enum XChaCha20Poly1305 {
    public static let keyByteCount = SodiumAEAD.keyByteCount
    public static let nonceByteCount = 24
    public static let tagByteCount = SodiumAEAD.tagByteCount

    static let aead = SodiumAEAD(nonceByteCount: nonceByteCount,
                                 encrypt: crypto_aead_xchacha20poly1305_ietf_encrypt,
                                 decrypt: crypto_aead_xchacha20poly1305_ietf_decrypt)

    /// Returns ciphertext followed by the tag.
    public static func seal(_ plaintext: [UInt8], key: UnsafeRawBufferPointer, nonce: [UInt8],
                            aad: [UInt8]) throws(CryptoError) -> [UInt8] {
        try aead.seal(plaintext[...], key: key, nonce: nonce[...], aad: aad[...])
    }

    /// Opens ciphertext || tag; `authenticationFailed` when the tag, key, nonce or AAD do not match.
    public static func open(_ sealed: ArraySlice<UInt8>, key: UnsafeRawBufferPointer, nonce: ArraySlice<UInt8>,
                            aad: [UInt8]) throws(CryptoError) -> [UInt8] {
        try aead.open(sealed, key: key, nonce: nonce, aad: aad[...])
    }
}
