/// The order `JSONSerialization`'s `.sortedKeys` puts object keys in on Linux: the system
/// locale's collation with numeric, case-insensitive and forced ordering (Unicode's root
/// collation). Exact for keys of printable ASCII, which is every key `sotto` prints (method
/// fields, hex ids); other characters sort after ASCII by code point.
///
/// ```swift
/// ["inboxes", "inboxId", "a10", "a2"].sorted(by: JSONKeyOrder.precedes)   // ["a2", "a10", "inboxes", "inboxId"]
/// ```
public enum JSONKeyOrder {
    /// Whether `left` sorts before `right`.
    public static func precedes(_ left: String, _ right: String) -> Bool {
        let a = Array(left.unicodeScalars), b = Array(right.unicodeScalars)
        if let primary = comparePrimary(a, b) { return primary }
        // Equal but for case and leading zeros: lowercase first, then the shorter text.
        for (x, y) in zip(a, b) where x != y && fold(x) == fold(y) { return isLowercase(x) }
        if a.count != b.count { return a.count < b.count }
        return left.unicodeScalars.lexicographicallyPrecedes(right.unicodeScalars)
    }

    // MARK: - Primary level: characters by collation rank, digit runs by value

    /// Printable ASCII other than digits and letters, in collation order (space first).
    private static let punctuation = Array(#" _-,;:!?.'"()[]{}@*/\&#%`^+<=>|~$"#.unicodeScalars)

    private static func rank(_ scalar: Unicode.Scalar) -> UInt32 {
        let value = scalar.value
        if let index = punctuation.firstIndex(of: scalar) { return UInt32(index) + 1 }
        if (0x30...0x39).contains(value) { return 100 }   // a digit run; its value decides among digits
        if (0x61...0x7a).contains(value) { return 200 + value - 0x61 }
        if (0x41...0x5a).contains(value) { return 200 + value - 0x41 }
        return value < 0x20 ? 0 : 0x1000 + value
    }

    /// `true`/`false` when the texts differ ignoring case and leading zeros, nil when they do not.
    private static func comparePrimary(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Bool? {
        var i = 0, j = 0
        while i < a.count && j < b.count {
            let ra = rank(a[i]), rb = rank(b[j])
            if ra != rb { return ra < rb }
            if ra == 100 {
                let (da, ni) = digitRun(a, from: i), (db, nj) = digitRun(b, from: j)
                if da.count != db.count { return da.count < db.count }
                if da != db { return da.lexicographicallyPrecedes(db) }
                i = ni; j = nj
            } else {
                i += 1; j += 1
            }
        }
        if i < a.count || j < b.count { return i == a.count }
        return nil
    }

    /// The digits from `start` on, without leading zeros, and where the run ends.
    private static func digitRun(_ scalars: [Unicode.Scalar], from start: Int) -> ([UInt32], Int) {
        var end = start
        while end < scalars.count, (0x30...0x39).contains(scalars[end].value) { end += 1 }
        let digits = scalars[start..<end].map(\.value).drop(while: { $0 == 0x30 })
        return (Array(digits), end)
    }

    private static func fold(_ scalar: Unicode.Scalar) -> UInt32 {
        (0x41...0x5a).contains(scalar.value) ? scalar.value + 0x20 : scalar.value
    }

    private static func isLowercase(_ scalar: Unicode.Scalar) -> Bool { (0x61...0x7a).contains(scalar.value) }
}
