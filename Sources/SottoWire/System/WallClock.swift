#if canImport(Glibc)
import Glibc
#endif

/// Wall-clock time without Foundation (the worker does not load it): Unix milliseconds, what
/// the database stores. Deadlines and measurements use ``MonotonicClock``.
///
/// ```swift
/// let now = WallClock.nowMs()
/// ```
public enum WallClock {
    public static func nowMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
