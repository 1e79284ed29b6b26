import Foundation
import SharedStore
import Testing
import TestSupport

/// `sotto relayd` exec's sotto-relayd from a thread that blocks SIGTERM and SIGINT; the mask
/// survives execv, so without resetting it the receiver ignored every stop (found by the
/// `make run` relay demo, whose teardown hung on it).
@Suite("sotto relayd signals")
struct RelaydCommandSignalTests {
    @Test("sotto relayd stops on SIGTERM, also while it waits for a relay that is down")
    func stopsOnSigterm() throws {
        let tmp = try TemporaryDirectory(prefix: "relayd-sig")
        defer { tmp.remove() }
        for path in [tmp.path + "/group", tmp.path + "/run"] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        // Port 1 on loopback: nothing listens, so relayd sits in its connect-retry loop.
        let relayd = try LoggedProcess.launch(try builtExecutable("sotto"), ["relayd"], environment: [
            "SOTTO_GROUP_DIR": tmp.path + "/group", "SOTTO_RUNTIME_DIR": tmp.path + "/run",
            "SOTTO_RELAY": "nats://127.0.0.1:1", "PATH": "/usr/bin:/bin",
        ])
        #expect(relayd.waitForLine(containing: "starting:", timeout: 30), "\(relayd.output)")

        relayd.signal(SIGTERM)
        let deadline = Date().addingTimeInterval(10)
        while relayd.isRunning, Date() < deadline { usleep(20_000) }
        let stopped = !relayd.isRunning
        if !stopped { relayd.signal(SIGKILL) }
        let status = relayd.waitForExit()
        #expect(stopped, "sotto relayd was still running 10 s after SIGTERM")
        #expect(status == 0, "a stop is not a failure (systemd would log it as one): exit \(status)\n\(relayd.output)")
    }
}
