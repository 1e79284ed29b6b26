import Glibc

/// The local time zone as the C library knows it (TZ, /etc/localtime): what `sotto read`
/// and `sotto chat` print times in, without Foundation's time zones and formatters.
///
/// ```swift
/// LocalTime.minutes(1_764_000_000_000)   // "2025-11-24 16:00" on a UTC machine
/// LocalTime.utcOffsetSeconds()           // 3600 in Paris in winter
/// ```
enum LocalTime {
    /// "yyyy-MM-dd HH:mm".
    static func minutes(_ ms: Int64) -> String {
        var local = broken(ms)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M", &local)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// How far local time is ahead of UTC now.
    static func utcOffsetSeconds() -> Int {
        Int(broken(Int64(time(nil)) * 1000).tm_gmtoff)
    }

    private static func broken(_ ms: Int64) -> tm {
        tzset()
        var seconds = time_t(ms / 1000)
        var local = tm()
        localtime_r(&seconds, &local)
        return local
    }
}
