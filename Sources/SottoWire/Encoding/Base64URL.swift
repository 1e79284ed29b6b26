/// base64url (RFC 4648 §5) without padding, as PROTOCOL.md writes envelopes, content and
/// invite codes. Decoding also accepts padded input and rejects everything else.
///
/// ```swift
/// Base64URL.encode(Array("hi".utf8))   // "aGk"
/// Base64URL.decode("aGk=")             // [0x68, 0x69]
/// Base64URL.decode("a+b/")             // nil: that is base64, not base64url
/// ```
public enum Base64URL {
    static let alphabet: [UInt8] =
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let b0 = iterator.next() {
            let b1 = iterator.next()
            let b2 = iterator.next()
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | (b1 ?? 0) >> 4)])
            if let b1 {
                out.append(alphabet[Int((b1 & 0x0f) << 2 | (b2 ?? 0) >> 6)])
            }
            if let b2 {
                out.append(alphabet[Int(b2 & 0x3f)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes base64url with or without `=` padding. `nil` for any other character, a
    /// length that cannot be base64, padding in the middle, or non-zero trailing bits.
    public static func decode(_ text: String) -> [UInt8]? {
        var chars = Array(text.utf8)
        if chars.count % 4 == 0 {
            var padding = 0
            while padding < 2, chars.last == UInt8(ascii: "=") {
                chars.removeLast()
                padding += 1
            }
        }
        if chars.count % 4 == 1 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for char in chars {
            guard let value = sextet(char) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero, so each byte string has exactly one encoding.
        if bits > 0, accumulator & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return out
    }

    private static func sextet(_ char: UInt8) -> UInt8? {
        switch char {
        case 0x41...0x5a: return char - 0x41
        case 0x61...0x7a: return char - 0x61 + 26
        case 0x30...0x39: return char - 0x30 + 52
        case UInt8(ascii: "-"): return 62
        case UInt8(ascii: "_"): return 63
        default: return nil
        }
    }
}
