import Foundation
import Testing

/// Where a suite's `systemd --user` sandbox cannot be made: skipped with the reason printed,
/// except under CI as root, where the sandbox can be made and a run that did not test what it
/// claims must fail, naming why.
///
/// ```swift
/// guard let manager = started else { return sandboxUnavailable("A real service manager", skip) }
/// ```
func sandboxUnavailable(_ suite: String, _ reason: String?) {
    let why = reason ?? "the sandbox cannot be made here"
    if ProcessInfo.processInfo.environment["CI"].map({ !$0.isEmpty }) == true && getuid() == 0 {
        Issue.record("'\(suite)' could not start its systemd --user sandbox under CI as root: \(why)")
    } else {
        print("SKIPPED '\(suite)': \(why)")
    }
}
