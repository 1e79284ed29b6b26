import Foundation
import TestSupport

/// How hard a stress run pushes: the short profile runs inside `make test`; `make stress`
/// sets `SOTTO_STRESS_PROFILE=full` (read by `StressProfileVariable`) and `SOTTO_STRESS_BIN` to
/// the release build.
///
/// ```swift
/// let profile = StressProfile.current
/// profile.pushes        // 2_000 (short) or 50_000 (full)
/// try profile.executable("sotto-notify")
/// ```
struct StressProfile: Sendable {
    let name: String
    let pushes: Int
    let senders: Int
    let keystoreIdentities: Int
    let keystorePushes: Int

    /// Part 2: `sotto-notify` workers SIGKILLed at random points, and daemon kills mid-burst.
    var workerKills: Int { name == "full" ? 2_000 : 200 }
    var daemonKills: Int { name == "full" ? 5 : 1 }
    /// Issue #10: sequential pushes with no daemon and no held connection, and the window
    /// (first vs last) whose per-push cost is compared.
    var alonePushes: Int { name == "full" ? 3_000 : 300 }
    var aloneWindow: Int { name == "full" ? 500 : 75 }

    static let short = StressProfile(name: "short", pushes: 2_000, senders: 16, keystoreIdentities: 400, keystorePushes: 120)
    static let full = StressProfile(name: "full", pushes: 50_000, senders: 16, keystoreIdentities: 5_000, keystorePushes: 1_500)

    static var current: StressProfile {
        let environment = ProcessInfo.processInfo.environment
        var profile = StressProfileVariable.isFull ? full : short
        if let text = environment["SOTTO_STRESS_PUSHES"], let pushes = Int(text), pushes > 0 {
            profile = StressProfile(name: profile.name, pushes: pushes, senders: profile.senders,
                                    keystoreIdentities: profile.keystoreIdentities, keystorePushes: profile.keystorePushes)
        }
        return profile
    }

    /// `$SOTTO_STRESS_BIN/NAME` when set (the release build under `make stress`), else the
    /// debug build next to the tests.
    func executable(_ name: String) throws -> String {
        if let directory = ProcessInfo.processInfo.environment["SOTTO_STRESS_BIN"], !directory.isEmpty {
            let path = URL(fileURLWithPath: directory).appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return try builtExecutable(name)
    }
}

/// Runs blocking work (threads, pipes, `waitpid`) on its own thread so it never occupies
/// the two threads of Swift's cooperative pool on this machine.
func onDedicatedThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
        }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// A failure of the harness itself (not of the system under test).
struct StressFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
