import Foundation

/// What another process is doing, read from /proc: for a test that must act once a process
/// waits (SQLite's busy handler sleeping between tries for a lock) instead of guessing a delay.
///
/// ```swift
/// let writer = try ChildProcess.launch(probe, [group, "1"])
/// #expect(ProcessProbe.waitUntilSleeping(pid: writer.pid, timeout: 10))   // blocked on the lock
/// ```
public enum ProcessProbe {
    #if arch(x86_64)
    static let sleepSyscalls: Set<String> = ["35", "230"]    // nanosleep, clock_nanosleep
    #else
    static let sleepSyscalls: Set<String> = ["101", "115"]   // aarch64
    #endif

    /// Whether `pid`'s main thread is sleeping in nanosleep or clock_nanosleep, polled (every
    /// millisecond, by reading /proc) until it is or `timeout` seconds passed.
    public static func waitUntilSleeping(pid: Int32, timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8),
               let number = text.split(separator: " ").first, sleepSyscalls.contains(String(number)) {
                return true
            }
            usleep(1_000)
        }
        return false
    }
}
