import CSodium

/// The one seal and open over libsodium's IETF AEAD calls, which share one shape: the
/// ChaCha20-Poly1305 and XChaCha20-Poly1305 types differ only in the call and the nonce size.
///
/// ```swift
/// let sealed = try ChaCha20Poly1305.aead.seal(plain[...], key: rawKey, nonce: nonce[...], aad: aad[...])
/// ```
struct SodiumAEAD: Sendable {
    /// libsodium's `crypto_aead_*_ietf_encrypt` (nonnull: the ciphertext, nonce and key).
    typealias Encrypt = @Sendable (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt64>?, UnsafePointer<UInt8>?, UInt64,
                                   UnsafePointer<UInt8>?, UInt64, UnsafePointer<UInt8>?, UnsafePointer<UInt8>,
                                   UnsafePointer<UInt8>) -> Int32
    /// libsodium's `crypto_aead_*_ietf_decrypt` (nonnull: the ciphertext, nonce and key).
    typealias Decrypt = @Sendable (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt64>?, UnsafeMutablePointer<UInt8>?,
                                   UnsafePointer<UInt8>, UInt64, UnsafePointer<UInt8>?, UInt64, UnsafePointer<UInt8>,
                                   UnsafePointer<UInt8>) -> Int32

    static let keyByteCount = 32
    static let tagByteCount = 16

    let nonceByteCount: Int
    let encrypt: Encrypt
    let decrypt: Decrypt

    /// Returns ciphertext followed by the tag.
    func seal(_ plaintext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
              aad: UnsafeRawBufferPointer) throws(CryptoError) -> [UInt8] {
        guard key.count == Self.keyByteCount, nonce.count == nonceByteCount else { throw CryptoError.invalidLength }
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: plaintext.count + Self.tagByteCount)
        var outLength: UInt64 = 0
        let result = out.withUnsafeMutableBufferPointer { cipher in
            // Never nil: the output holds at least the tag, and nonce and key were counted.
            encrypt(cipher.baseAddress!, &outLength, Self.bytes(plaintext), UInt64(plaintext.count), Self.bytes(aad), UInt64(aad.count),
                    nil, Self.bytes(nonce)!, Self.bytes(key)!)
        }
        guard result == 0 else { throw CryptoError.invalidLength }
        return out
    }

    /// Opens ciphertext || tag; `authenticationFailed` when the tag, key, nonce or AAD do not match.
    func open(_ sealed: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
              aad: UnsafeRawBufferPointer) throws(CryptoError) -> [UInt8] {
        guard key.count == Self.keyByteCount, nonce.count == nonceByteCount else { throw CryptoError.invalidLength }
        guard sealed.count >= Self.tagByteCount else { throw CryptoError.authenticationFailed }
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: sealed.count - Self.tagByteCount)
        var outLength: UInt64 = 0
        let result = out.withUnsafeMutableBufferPointer { plain in
            // Never nil: the sealed bytes hold at least the tag, and nonce and key were counted.
            decrypt(plain.baseAddress, &outLength, nil, Self.bytes(sealed)!, UInt64(sealed.count), Self.bytes(aad), UInt64(aad.count),
                    Self.bytes(nonce)!, Self.bytes(key)!)
        }
        guard result == 0 else { throw CryptoError.authenticationFailed }
        return out
    }

    private static func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? {
        buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
    }
}

// MARK: - Byte arrays

extension SodiumAEAD {
    func seal(_ plaintext: ArraySlice<UInt8>, key: UnsafeRawBufferPointer, nonce: ArraySlice<UInt8>,
              aad: ArraySlice<UInt8>) throws(CryptoError) -> [UInt8] {
        try Self.borrowing(plaintext) { plaintext throws(CryptoError) in
            try Self.borrowing(nonce) { nonce throws(CryptoError) in
                try Self.borrowing(aad) { aad throws(CryptoError) in try seal(plaintext, key: key, nonce: nonce, aad: aad) }
            }
        }
    }

    func open(_ sealed: ArraySlice<UInt8>, key: UnsafeRawBufferPointer, nonce: ArraySlice<UInt8>,
              aad: ArraySlice<UInt8>) throws(CryptoError) -> [UInt8] {
        try Self.borrowing(sealed) { sealed throws(CryptoError) in
            try Self.borrowing(nonce) { nonce throws(CryptoError) in
                try Self.borrowing(aad) { aad throws(CryptoError) in try open(sealed, key: key, nonce: nonce, aad: aad) }
            }
        }
    }

    /// `bytes` as a raw buffer for `body`, keeping `body`'s typed error.
    static func borrowing(_ bytes: ArraySlice<UInt8>,
                          _ body: (UnsafeRawBufferPointer) throws(CryptoError) -> [UInt8]) throws(CryptoError) -> [UInt8] {
        let result: Result<[UInt8], CryptoError> = bytes.withUnsafeBytes { raw in
            Result { () throws(CryptoError) -> [UInt8] in try body(raw) }
        }
        return try result.get()
    }
}
