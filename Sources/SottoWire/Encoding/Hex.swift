/// Lowercase hexadecimal, as every id and key in PROTOCOL.md is written.
///
/// ```swift
/// Hex.encode([0xde, 0xad])        // "dead"
/// Hex.decode("dead")              // [0xde, 0xad]
/// Hex.decode("xyz")               // nil
/// ```
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes hex (either case accepted). `nil` for odd length or a non-hex character.
    /// With `count`, also `nil` unless exactly that many bytes result.
    public static func decode(_ text: String, count: Int? = nil) -> [UInt8]? {
        let utf8 = text.utf8
        guard utf8.count % 2 == 0 else { return nil }
        if let count, utf8.count != count * 2 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var high: UInt8?
        for char in utf8 {
            guard let nibble = value(of: char) else { return nil }
            if let h = high {
                out.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return out
    }

    /// True when `text` is exactly `byteCount` bytes of *lowercase* hex (the canonical form of ids).
    public static func isCanonical(_ text: String, byteCount: Int) -> Bool {
        let utf8 = text.utf8
        guard utf8.count == byteCount * 2 else { return false }
        return utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// True for an ASCII hex digit of either case.
    public static func isDigit(_ char: UInt8) -> Bool { value(of: char) != nil }

    private static func value(of char: UInt8) -> UInt8? {
        switch char {
        case 0x30...0x39: return char - 0x30
        case 0x61...0x66: return char - 0x61 + 10
        case 0x41...0x46: return char - 0x41 + 10
        default: return nil
        }
    }
}
