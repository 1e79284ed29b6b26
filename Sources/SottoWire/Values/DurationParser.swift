/// Parses the CLI's durations: a positive integer followed by `ms`, `s`, `m`, `h` or `d`
/// (`90s`, `30m`, `1h`, `7d`); a bare number is seconds. Returns milliseconds, at most
/// `maximumMs` (ADR 0017), so that "now + duration" can never overflow.
///
/// ```swift
/// DurationParser.milliseconds("1h")      // 3_600_000
/// DurationParser.milliseconds("soon")    // nil
/// DurationParser.milliseconds("3651d")   // nil: over the maximum
/// ```
public enum DurationParser {
    /// 3650 days (10 years): far beyond any explosion or invite anyone means, and far
    /// inside what a JSON number carries exactly (2^53 ms) and what ISO 8601 writes.
    public static let maximumMs: Int64 = 3650 * 86_400_000
    public static let maximumText = "3650d (10 years)"

    public static func milliseconds(_ text: String) -> Int64? {
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
        return overflow || product > maximumMs ? nil : product
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
