import CSodium

/// HMAC-SHA256 (RFC 2104) with a key of any length (libsodium's `crypto_auth_hmacsha256_*`).
///
/// ```swift
/// let tag = HMACSHA256.authenticate(Array("data".utf8), key: Array("key".utf8))   // 32 bytes
/// ```
public enum HMACSHA256 {
    public static let byteCount = 32

    public static func authenticate(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        authenticate([message], key: key)
    }

    /// HMAC over the concatenation of `parts`, without building it.
    public static func authenticate(_ parts: [[UInt8]], key: [UInt8]) -> [UInt8] {
        Sodium.ensureInitialized()
        var state = crypto_auth_hmacsha256_state()
        _ = crypto_auth_hmacsha256_init(&state, key, key.count)
        for part in parts {
            part.withUnsafeBufferPointer { buffer in
                _ = crypto_auth_hmacsha256_update(&state, buffer.baseAddress, UInt64(buffer.count))
            }
        }
        var out = [UInt8](repeating: 0, count: byteCount)
        _ = crypto_auth_hmacsha256_final(&state, &out)
        withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress, $0.count) }
        return out
    }
}
