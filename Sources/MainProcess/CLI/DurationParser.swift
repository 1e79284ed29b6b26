/// Parses the CLI's durations: a positive integer followed by `ms`, `s`, `m`, `h` or `d`
/// (`90s`, `30m`, `1h`, `7d`); a bare number is seconds. Returns milliseconds.
///
/// ```swift
/// DurationParser.milliseconds("1h")    // 3_600_000
/// DurationParser.milliseconds("soon")  // nil
/// ```
enum DurationParser {
    static func milliseconds(_ text: String) -> Int64? {
        let units: [(suffix: String, factor: Int64)] = [("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
        let trimmed = text.trimmingPrefixAndSuffixSpaces()
        var number = Substring(trimmed)
        var factor: Int64 = 1_000
        for unit in units where trimmed.hasSuffix(unit.suffix) {
            number = trimmed.dropLast(unit.suffix.count)
            factor = unit.factor
            break
        }
        guard !number.isEmpty, number.count <= 12, number.allSatisfy(\.isASCIIDigit),
              let value = Int64(number), value > 0 else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: factor)
        return overflow ? nil : product
    }
}

private extension String {
    func trimmingPrefixAndSuffixSpaces() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
