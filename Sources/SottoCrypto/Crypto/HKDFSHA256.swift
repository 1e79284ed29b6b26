/// HKDF with SHA-256 (RFC 5869), built on `HMACSHA256`.
///
/// ```swift
/// let key = HKDFSHA256.derive(ikm: x, salt: e + r, info: Array("sotto/envelope/v1".utf8), length: 32)
/// ```
public enum HKDFSHA256 {
    /// Extract then expand. `length` must be at most 255 × 32 bytes.
    public static func derive(ikm: [UInt8], salt: [UInt8], info: [UInt8], length: Int) -> [UInt8] {
        var prk = extract(ikm: ikm, salt: salt)
        defer { SecretBytes.zero(&prk) }
        return expand(prk: prk, info: info, length: length)
    }

    public static func extract(ikm: [UInt8], salt: [UInt8]) -> [UInt8] {
        // RFC 5869 §2.2: an absent salt is HashLen zero bytes.
        HMACSHA256.authenticate(ikm, key: salt.isEmpty ? [UInt8](repeating: 0, count: 32) : salt)
    }

    public static func expand(prk: [UInt8], info: [UInt8], length: Int) -> [UInt8] {
        precondition(length >= 0 && length <= 255 * HMACSHA256.byteCount, "HKDF length out of range")
        var out: [UInt8] = []
        out.reserveCapacity(length)
        var previous: [UInt8] = []
        var counter: UInt8 = 1
        while out.count < length {
            previous = HMACSHA256.authenticate([previous, info, [counter]], key: prk)
            out.append(contentsOf: previous.prefix(length - out.count))
            counter &+= 1
        }
        SecretBytes.zero(&previous)
        return out
    }
}
