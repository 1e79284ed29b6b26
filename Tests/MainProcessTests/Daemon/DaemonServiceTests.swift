import Foundation
import SharedStore
import Testing
import TestSupport

extension DaemonProcessTests {
    /// The systemd side: READY/STATUS/STOPPING, the watchdog, one daemon per group directory.
    @Suite("Service")
    struct Service {
        @Test("READY=1 with a STATUS line once the control socket answers; SIGTERM gives STOPPING=1 and exit 0")
        func readyStatusStopping() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            let lines = daemon.readyMessage.split(separator: "\n").map(String.init)
            #expect(lines.contains("READY=1"))
            let status = try #require(lines.first { $0.hasPrefix("STATUS=") })
            #expect(status.contains("inboxes awake"))
            // READY means ready: the control socket answers at once, migrations are done.
            let reply = try daemon.result("status")
            #expect(int64(reply["pid"]) == Int64(daemon.pid))
            let conn = try SQLiteConnection.open(path: home.databasePath, profile: .worker)
            try SchemaCheck.verify(conn)
            var info = stat()
            #expect(stat(home.controlSocketPath, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600)

            #expect(try daemon.stop() == 0)
            #expect(daemon.notify.messages.contains { $0.split(separator: "\n").contains("STOPPING=1") })
            // No watchdog was asked for, so none was sent.
            #expect(!daemon.notify.messages.contains { $0.contains("WATCHDOG=1") })
            #expect(!FileManager.default.fileExists(atPath: home.controlSocketPath))
            #expect(daemon.log.contains("stopped"))
        }

        @Test("SIGINT drains like SIGTERM")
        func sigint() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            #expect(try daemon.stop(signal: SIGINT) == 0)
        }

        @Test("WATCHDOG_USEC=200ms: WATCHDOG=1 pings arrive, with fresh STATUS lines")
        func watchdog() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home, environment: ["WATCHDOG_USEC": "200000"])
            let started = Date()
            var pings = 0
            while pings < 5, Date().timeIntervalSince(started) < 20 {
                if let message = daemon.notify.next(timeout: 5), message.split(separator: "\n").contains("WATCHDOG=1") {
                    pings += 1
                }
            }
            #expect(pings == 5)
            // Half of 200 ms between pings: 5 pings take well under the 20 s deadline, and
            // a ping interval of WATCHDOG_USEC itself would already risk a restart.
            #expect(Date().timeIntervalSince(started) < 5)
            #expect(daemon.notify.messages.contains { $0.hasPrefix("STATUS=") })
            #expect(try daemon.stop() == 0)
        }

        @Test("a second daemon on the same group directory is refused and the first keeps serving")
        func secondDaemonRefused() throws {
            let home = try DaemonHome()
            let first = try DaemonProcess.start(home: home)
            let second = try DaemonProcess.launch(home: home)
            #expect(second.waitForExit() == 75)
            #expect(second.log.contains("already running"))
            // It never said READY=1; its last STATUS= is why (what `sotto install` prints).
            let said = second.notify.next(timeout: 0)
            #expect(said?.split(separator: "\n").contains("READY=1") == false, "\(second.notify.messages)")
            #expect(said?.contains("STATUS=another sotto daemon is already running") == true, "\(second.notify.messages)")
            #expect(int64(try first.result("status")["pid"]) == Int64(first.pid))
            #expect(try first.stop() == 0)
        }

        @Test("a start-up failure is the daemon's last STATUS= (systemd's StatusText, which sotto install prints)")
        func startupFailureStatus() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.launch(home: home, environment: ["SOTTO_RELAY": "http://relay.example:4222"])
            // Read as it comes: its sd_notify_barrier waits until this side has taken the datagram.
            let said = try #require(daemon.notify.next(timeout: 30), "no datagram; exit \(daemon.waitForExit()): \(daemon.log)")
            #expect(daemon.waitForExit() == 78, "\(daemon.log)")
            #expect(said.contains("malformed relay URL") && !said.contains("READY=1"), "\(said)\n\(daemon.log)")
            #expect(daemon.log.contains("malformed relay URL"))
        }
    }
}
