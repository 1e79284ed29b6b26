/// The one ISO 8601 form Sotto reads and writes: `YYYY-MM-DDTHH:MM:SS(.f…)?Z` (UTC), without
/// Foundation. Fractions beyond milliseconds are truncated.
///
/// ```swift
/// ISO8601.millis(from: "2026-11-21T22:00:00Z")   // 1795298400000
/// ISO8601.string(fromMillis: 1795298400000)      // "2026-11-21T22:00:00Z"
/// ```
public enum ISO8601 {
    /// 9999-12-31T23:59:59.999Z, the last instant this form can write. Also below 2^53, so
    /// a JSON reader that uses doubles (jq, JavaScript) keeps every millisecond.
    public static let maxMillis: Int64 = 253_402_300_799_999

    public static func millis(from text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count >= 20, b.count <= 30, b.last == UInt8(ascii: "Z"),
              b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
              b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for i in range {
                guard (0x30...0x39).contains(b[i]) else { return nil }
                value = value * 10 + Int64(b[i] - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
              hour < 24, minute < 60, second < 60
        else { return nil }
        var millis: Int64 = 0
        if b.count > 20 {
            // ".f…Z": one to nine fraction digits.
            guard b[19] == UInt8(ascii: "."), b.count - 21 >= 1, b.count - 21 <= 9, number(20..<(b.count - 1)) != nil
            else { return nil }
            var scale: Int64 = 100
            for i in 20..<min(23, b.count - 1) {
                millis += Int64(b[i] - 0x30) * scale
                scale /= 10
            }
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`, with `.fff` when the milliseconds are not zero. Years outside
    /// 0…9999 are clamped.
    public static func string(fromMillis input: Int64) -> String {
        let ms = min(max(input, -62_167_219_200_000), maxMillis)
        let totalSeconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let millis = ms - totalSeconds * 1000
        let days = totalSeconds >= 0 ? totalSeconds / 86400 : (totalSeconds - 86399) / 86400
        let secondOfDay = totalSeconds - days * 86400
        let (year, month, day) = civil(fromDays: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        var out = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
        out += "\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if millis != 0 { out += ".\(pad(millis, 3))" }
        return out + "Z"
    }

    // MARK: - Proleptic Gregorian calendar (H. Hinnant's algorithms)

    static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays input: Int64) -> (Int64, Int64, Int64) {
        let z = input + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
