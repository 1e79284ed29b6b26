import CSodium

/// ChaCha20-Poly1305 AEAD, IETF variant (RFC 8439: 12-byte nonce, 16-byte tag), libsodium.
///
/// ```swift
/// let sealed = try ChaCha20Poly1305.seal(plain, key: key, nonce: nonce, aad: aad)   // ciphertext || tag
/// let plain2 = try ChaCha20Poly1305.open(sealed, key: key, nonce: nonce, aad: aad)
/// ```
public enum ChaCha20Poly1305 {
    public static let keyByteCount = 32
    public static let nonceByteCount = 12
    public static let tagByteCount = 16

    /// Returns ciphertext followed by the tag.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard key.count == keyByteCount, nonce.count == nonceByteCount else { throw CryptoError.invalidLength }
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: plaintext.count + tagByteCount)
        var outLength: UInt64 = 0
        let result = plaintext.withUnsafeBufferPointer { message in
            aad.withUnsafeBufferPointer { ad in
                crypto_aead_chacha20poly1305_ietf_encrypt(
                    &out, &outLength, message.baseAddress, UInt64(message.count),
                    ad.baseAddress, UInt64(ad.count), nil, nonce, key)
            }
        }
        guard result == 0 else { throw CryptoError.invalidLength }
        return out
    }

    /// Opens ciphertext || tag; `authenticationFailed` when the tag, key, nonce or AAD do not match.
    public static func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard key.count == keyByteCount, nonce.count == nonceByteCount else { throw CryptoError.invalidLength }
        guard sealed.count >= tagByteCount else { throw CryptoError.authenticationFailed }
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: sealed.count - tagByteCount)
        var outLength: UInt64 = 0
        let result = aad.withUnsafeBufferPointer { ad in
            out.withUnsafeMutableBufferPointer { plain in
                crypto_aead_chacha20poly1305_ietf_decrypt(
                    plain.baseAddress, &outLength, nil, sealed, UInt64(sealed.count),
                    ad.baseAddress, UInt64(ad.count), nonce, key)
            }
        }
        guard result == 0 else { throw CryptoError.authenticationFailed }
        return out
    }
}
