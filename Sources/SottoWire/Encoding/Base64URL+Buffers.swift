// MARK: - base64url between buffers, for bulk data

extension Base64URL {
    /// The unpadded base64url length of `count` bytes.
    public static func encodedCount(_ count: Int) -> Int { (count * 4 + 2) / 3 }

    /// Appends the unpadded base64url of `bytes` to `out`: the same text as `encode`, a table
    /// look-up per character with no per-byte allocation (an attachment's 64 KiB pieces,
    /// docs/adr/0077).
    ///
    /// ```swift
    /// var line: [UInt8] = []
    /// bytes.withUnsafeBytes { Base64URL.append($0, to: &line) }
    /// ```
    public static func append(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        let count = bytes.count
        guard count > 0 else { return }
        let start = out.count
        let total = encodedCount(count)
        out.append(contentsOf: repeatElement(0, count: total))
        alphabet.withUnsafeBufferPointer { table in
            out.withUnsafeMutableBufferPointer { buffer in
                let source = bytes.bindMemory(to: UInt8.self)
                var o = start
                var i = 0
                while i + 3 <= count {
                    let b0 = source[i], b1 = source[i + 1], b2 = source[i + 2]
                    buffer[o] = table[Int(b0 >> 2)]
                    buffer[o + 1] = table[Int((b0 & 0x03) << 4 | b1 >> 4)]
                    buffer[o + 2] = table[Int((b1 & 0x0f) << 2 | b2 >> 6)]
                    buffer[o + 3] = table[Int(b2 & 0x3f)]
                    i += 3
                    o += 4
                }
                if i < count {
                    let b0 = source[i], b1: UInt8 = i + 1 < count ? source[i + 1] : 0
                    buffer[o] = table[Int(b0 >> 2)]
                    buffer[o + 1] = table[Int((b0 & 0x03) << 4 | b1 >> 4)]
                    if i + 1 < count { buffer[o + 2] = table[Int((b1 & 0x0f) << 2)] }
                }
            }
        }
    }

    /// Decodes unpadded base64url `text` and appends the bytes to `out`; false (and `out`
    /// as it was) for any other character, a length that cannot be base64, or non-zero
    /// trailing bits: what `decode` refuses, without making a String.
    public static func decode(_ text: UnsafeRawBufferPointer, appendingTo out: inout [UInt8]) -> Bool {
        let count = text.count
        guard count % 4 != 1 else { return false }
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: count * 3 / 4))
        let ok = sextets.withUnsafeBufferPointer { table in
            out.withUnsafeMutableBufferPointer { buffer -> Bool in
                let source = text.bindMemory(to: UInt8.self)
                var o = start
                var i = 0
                while i + 4 <= count {
                    let a = table[Int(source[i])], b = table[Int(source[i + 1])]
                    let c = table[Int(source[i + 2])], d = table[Int(source[i + 3])]
                    guard (a | b | c | d) & 0x40 == 0 else { return false }
                    buffer[o] = a << 2 | b >> 4
                    buffer[o + 1] = (b & 0x0f) << 4 | c >> 2
                    buffer[o + 2] = (c & 0x03) << 6 | d
                    i += 4
                    o += 3
                }
                let rest = count - i
                if rest >= 2 {
                    let a = table[Int(source[i])], b = table[Int(source[i + 1])]
                    guard (a | b) & 0x40 == 0 else { return false }
                    buffer[o] = a << 2 | b >> 4
                    if rest == 3 {
                        let c = table[Int(source[i + 2])]
                        guard c & 0x40 == 0, c & 0x03 == 0 else { return false }
                        buffer[o + 1] = (b & 0x0f) << 4 | c >> 2
                    } else {
                        guard b & 0x0f == 0 else { return false }
                    }
                }
                return true
            }
        }
        if !ok { out.removeSubrange(start...) }
        return ok
    }

    /// Each byte's sextet, or 0x40 for a byte that is not base64url.
    private static let sextets: [UInt8] = {
        var table = [UInt8](repeating: 0x40, count: 256)
        for (index, char) in alphabet.enumerated() { table[Int(char)] = UInt8(index) }
        return table
    }()
}
