import CSodium

/// XChaCha20-Poly1305 AEAD (libsodium's IETF construction: 24-byte nonce, 16-byte tag). The
/// nonce is long enough to be drawn at random for every message under one key.
///
/// ```swift
/// let nonce = SecureRandom.bytes(XChaCha20Poly1305.nonceByteCount)
/// let sealed = try XChaCha20Poly1305.seal(plain, key: key, nonce: nonce, aad: aad)   // ciphertext || tag
/// ```
public enum XChaCha20Poly1305 {
    public static let keyByteCount = 32
    public static let nonceByteCount = 24
    public static let tagByteCount = 16

    /// Returns ciphertext followed by the tag.
    public static func seal(_ plaintext: [UInt8], key: UnsafeRawBufferPointer, nonce: [UInt8],
                            aad: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard key.count == keyByteCount, nonce.count == nonceByteCount else { throw CryptoError.invalidLength }
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: plaintext.count + tagByteCount)
        var outLength: UInt64 = 0
        let result = plaintext.withUnsafeBufferPointer { message in
            aad.withUnsafeBufferPointer { ad in
                crypto_aead_xchacha20poly1305_ietf_encrypt(
                    &out, &outLength, message.baseAddress, UInt64(message.count),
                    ad.baseAddress, UInt64(ad.count), nil, nonce,
                    key.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard result == 0 else { throw CryptoError.invalidLength }
        return out
    }

    /// Opens ciphertext || tag; `authenticationFailed` when the tag, key, nonce or AAD do not match.
    public static func open(_ sealed: ArraySlice<UInt8>, key: UnsafeRawBufferPointer, nonce: ArraySlice<UInt8>,
                            aad: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard key.count == keyByteCount, nonce.count == nonceByteCount else { throw CryptoError.invalidLength }
        guard sealed.count >= tagByteCount else { throw CryptoError.authenticationFailed }
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: sealed.count - tagByteCount)
        var outLength: UInt64 = 0
        let result = sealed.withUnsafeBufferPointer { cipher in
            nonce.withUnsafeBufferPointer { nonceBytes in
                aad.withUnsafeBufferPointer { ad in
                    out.withUnsafeMutableBufferPointer { plain in
                        crypto_aead_xchacha20poly1305_ietf_decrypt(
                            plain.baseAddress, &outLength, nil, cipher.baseAddress!, UInt64(cipher.count),
                            ad.baseAddress, UInt64(ad.count), nonceBytes.baseAddress!,
                            key.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
        }
        guard result == 0 else { throw CryptoError.authenticationFailed }
        return out
    }
}
