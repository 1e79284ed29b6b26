import Glibc

/// Milliseconds on CLOCK_MONOTONIC, for deadlines that wall-clock changes must not move.
///
/// ```swift
/// let due = MonotonicClock.nowMs() + 1_000
/// ```
enum MonotonicClock {
    static func nowMs() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
    }
}
