import CSodium
import SottoWire

/// Bytes from the kernel's CSPRNG through libsodium's `randombytes_buf` (which uses
/// `getrandom(2)` on Linux). Every key, nonce, id and secret in Sotto comes from here.
///
/// ```swift
/// let nonce = SecureRandom.bytes(12)
/// let clientId = SecureRandom.uuidV4()   // "3f0c7a52-8d1e-4b7a-9a55-2f4f0c1d9e10"
/// ```
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { randombytes_buf(base, buffer.count) }
        }
        return out
    }

    /// A random UUID v4 in canonical lowercase `8-4-4-4-12` form (a clientId).
    public static func uuidV4() -> String {
        uuidV4(from: bytes(16))
    }

    /// 16 bytes (random, or derived for a test) as a UUID v4: version and variant bits set,
    /// canonical lowercase form.
    public static func uuidV4(from source: [UInt8]) -> String {
        precondition(source.count >= 16, "a UUID needs 16 bytes")
        var b = Array(source.prefix(16))
        b[6] = (b[6] & 0x0f) | 0x40
        b[8] = (b[8] & 0x3f) | 0x80
        let hex = Array(Hex.encode(b).utf8)
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (index, char) in hex.enumerated() {
            if index == 8 || index == 12 || index == 16 || index == 20 { out.append(UInt8(ascii: "-")) }
            out.append(char)
        }
        return String(decoding: out, as: UTF8.self)
    }
}
