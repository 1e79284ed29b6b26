import CSodium

/// SHA-256 (libsodium).
///
/// ```swift
/// Hex.encode(SHA256.hash(Array("abc".utf8)))   // "ba7816bf…"
/// ```
public enum SHA256 {
    public static let byteCount = 32

    public static func hash<Bytes: Collection>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: byteCount)
        let input = Array(bytes)
        input.withUnsafeBufferPointer { message in
            _ = crypto_hash_sha256(&out, message.baseAddress, UInt64(message.count))
        }
        return out
    }
}
