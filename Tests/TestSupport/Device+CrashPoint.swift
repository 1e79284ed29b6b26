import Foundation

extension Device {
    /// Waits until the daemon, armed with `SOTTO_CRASH_AT`, killed itself with SIGKILL at its
    /// crash point, and reaps it: true. A daemon that did not (its step was never reached) is
    /// stopped and started again plainly: false, for the caller to note.
    ///
    /// ```swift
    /// try device.startDaemon(environment: [CrashPoint.variable: "outbox.relayed@300"])
    /// #expect(try device.diedAtCrashPoint("fan-out", timeoutMs: 60_000))
    /// ```
    public func diedAtCrashPoint(_ label: String, timeoutMs: Int64) throws -> Bool {
        let died = (try? waitUntil("\(label): \(name)'s daemon dies at its crash point", timeoutMs: timeoutMs) {
            !daemonIsRunning
        }) != nil
        guard died, daemonKillSignal == SIGKILL else {
            stopDaemon()
            try startDaemon()
            return false
        }
        stopDaemon()  // reaps it
        return true
    }
}
