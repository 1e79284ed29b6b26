#if canImport(Glibc)
import Glibc
#endif

/// Wall-clock and monotonic time without Foundation (the worker does not load it).
///
/// ```swift
/// let now = WallClock.nowMs()          // Unix milliseconds, what the database stores
/// let t0 = WallClock.monotonicNs()     // for timeouts and measurements
/// ```
public enum WallClock {
    public static func nowMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    public static func monotonicNs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
