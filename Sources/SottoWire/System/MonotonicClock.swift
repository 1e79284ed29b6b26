#if canImport(Glibc)
import Glibc
#endif

/// Time on CLOCK_MONOTONIC, for deadlines, timeouts and measurements that a change of the
/// wall clock must not move. Wall-clock time (what the database stores) is ``WallClock``.
///
/// ```swift
/// let due = MonotonicClock.nowMs() + 1_000
/// let t0 = MonotonicClock.nowNs()
/// let elapsedNs = MonotonicClock.nowNs() - t0
/// ```
public enum MonotonicClock {
    public static func nowNs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    public static func nowMs() -> Int64 {
        Int64(nowNs() / 1_000_000)
    }
}
