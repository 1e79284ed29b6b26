import Foundation
import SharedStore
import SottoWire
import TestSupport
import Testing

extension DaemonProcessTests {
    /// The daemon's service group (docs/adr/0024): a signal during start-up, a signal while a
    /// push is in flight, and a part that fails, each on the real `sotto daemon`.
    @Suite("Shutdown")
    struct Shutdown {
        // MARK: A signal before READY=1

        @Test("a signal during start-up (the database held by another writer) stops cleanly: exit 0, STOPPING=1, never READY=1",
              arguments: [SIGTERM, SIGINT])
        func signalBeforeReady(signal: Int32) throws {
            let home = try DaemonHome()
            try DaemonProcess.start(home: home).stop()  // the database exists, migrated
            // A worker-like writer holds the write lock: start-up waits in its migration step.
            let writer = try SQLiteConnection.open(path: home.databasePath, profile: .worker)
            _ = try writer.run("BEGIN IMMEDIATE")
            let daemon = try DaemonProcess.launch(home: home)
            defer { daemon.kill() }
            try waitUntil("the daemon catches \(signal)", daemon) { catchesSignal(pid: daemon.pid, signal) }
            Foundation.kill(daemon.pid, signal)
            try waitUntil("the daemon logs the stop request", daemon) {
                daemon.log.contains("stop requested during start-up")
            }
            _ = try writer.run("ROLLBACK")
            try waitUntil("the daemon exits", daemon) { !daemon.process.isRunning }

            #expect(daemon.waitForExit() == 0)
            #expect(daemon.process.terminationReason == .exit)
            #expect(daemon.notify.messages.contains { $0.split(separator: "\n").contains("STOPPING=1") })
            #expect(!daemon.notify.messages.contains { $0.contains("READY=1") })
            #expect(daemon.log.contains("stopped before READY=1"))
            #expect(!FileManager.default.fileExists(atPath: home.controlSocketPath))
            #expect(!FileManager.default.fileExists(atPath: home.eventsSocketPath))
            // The lock is free and nothing is half-done: the next start serves.
            let next = try DaemonProcess.start(home: home)
            #expect(try next.stop() == 0)
        }

        // MARK: A signal while a push is in flight

        @Test("SIGTERM while a push waits for its ack: the daemon finishes it, records it sent, then exits 0")
        func signalMidSend() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { daemon.kill() }
            let conversationId = try #require(try daemon.result("newConversation", ["name": "Trip"])["conversationId"] as? String)
            let member = try RemoteMember.join(conversationId: conversationId, databasePath: home.databasePath)
            let endpoint = try SlowAckEndpoint(path: home.tmp.path + "/slow.sock")
            defer { endpoint.close() }
            try setEndpoint("unix:" + endpoint.path, of: member.identity.inboxId, home: home)

            let messageId = try #require(try daemon.result("sendMessage", ["conversation": conversationId, "text": "hi"])["messageId"] as? String)
            try waitUntil("the push reaches the endpoint", daemon) { endpoint.received > 0 }
            Foundation.kill(daemon.pid, SIGTERM)
            try daemon.notify.waitFor("STOPPING=1", timeout: 30) { daemon.process.isRunning }
            #expect(daemon.process.isRunning)  // still waiting for the ack
            endpoint.ack()
            try waitUntil("the daemon exits", daemon) { !daemon.process.isRunning }
            #expect(daemon.waitForExit() == 0)
            #expect(try outboxStates(messageId, home: home) == ["sent"])

            // After a restart nothing is sent again: the endpoint got the push once.
            let again = try DaemonProcess.start(home: home)
            _ = try again.result("status")
            #expect(try outboxStates(messageId, home: home) == ["sent"])
            #expect(try again.stop() == 0)
            #expect(endpoint.received == 1)
        }

        // MARK: A part that fails

        @Test("a part that throws stops the daemon: a log line naming it, STOPPING=1, the sockets closed, exit 70",
              arguments: ["outbox", "change-feed", "control", "wal-keeper", "inbox-rebalance"])
        func failingPart(part: String) throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.launch(home: home, environment: ["SOTTO_FAIL_SERVICE": part])
            defer { daemon.kill() }
            try waitUntil("the daemon exits", daemon) { !daemon.process.isRunning }
            #expect(daemon.waitForExit() == 70)
            #expect(daemon.log.contains("\(part) failed: failure injected by SOTTO_FAIL_SERVICE; stopping the daemon"))
            #expect(daemon.notify.messages.contains { $0.split(separator: "\n").contains("STOPPING=1") })
            #expect(!FileManager.default.fileExists(atPath: home.controlSocketPath))
            #expect(!FileManager.default.fileExists(atPath: home.eventsSocketPath))
        }
    }
}

// MARK: - Helpers

/// Polls `condition` until it holds, paced by the daemon's notify socket (never a bare
/// sleep); throws after `timeout` seconds.
private func waitUntil(_ what: String, _ daemon: DaemonProcess, timeout: Double = 30,
                       _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
        guard deadline.timeIntervalSinceNow > 0 else {
            throw DaemonProcess.Failure(description: "\(what): not within \(timeout) s; log:\n\(daemon.log)")
        }
        _ = daemon.notify.next(timeout: 0.02)
    }
}

/// True once the process ignores or catches `signal` (its handler is installed), from the
/// masks in `/proc/<pid>/status`.
private func catchesSignal(pid: Int32, _ signal: Int32) -> Bool {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
    let bit = UInt64(1) << UInt64(signal - 1)
    return status.split(separator: "\n").contains { line in
        let parts = line.split(separator: "\t")
        guard parts.count == 2, parts[0] == "SigIgn:" || parts[0] == "SigCgt:",
              let mask = UInt64(parts[1], radix: 16) else { return false }
        return mask & bit != 0
    }
}

private func setEndpoint(_ endpoint: String, of inboxId: String, home: DaemonHome) throws {
    let conn = try SQLiteConnection.open(path: home.databasePath, profile: .worker)
    try conn.immediateTransaction { () throws(StoreError) in
        _ = try conn.run("UPDATE member SET endpoint = ? WHERE inboxId = ?", [.text(endpoint), .text(inboxId)])
    }
}

private func outboxStates(_ messageId: String, home: DaemonHome) throws -> [String] {
    let conn = try SQLiteConnection.open(path: home.databasePath, profile: .worker)
    return try conn.query("SELECT state FROM outbox WHERE messageId = ?", [.text(messageId)]).map { try $0.string(0) }
}

/// A member's push endpoint that reads each push and acks it only when told to: a push
/// that stays in flight for as long as a test needs.
private final class SlowAckEndpoint: @unchecked Sendable {
    let path: String
    private let fd: Int32
    private let lock = NSLock()
    private var count = 0
    private let go = DispatchSemaphore(value: 0)

    init(path: String) throws {
        self.path = path
        fd = UnixSocket.bind(path, type: Int32(SOCK_STREAM.rawValue))
        guard fd >= 0, listen(fd, 8) == 0 else { throw DaemonProcess.Failure(description: "cannot listen on \(path)") }
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    var received: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }

    /// Lets the push waiting now (or the next one) have its ack.
    func ack() { go.signal() }

    func close() {
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
        unlink(path)
    }

    private func serve() {
        while true {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while buffer.withUnsafeMutableBytes({ read(client, $0.baseAddress, $0.count) }) > 0 {}  // up to the sender's EOF
            lock.lock()
            count += 1
            lock.unlock()
            go.wait()
            let line = Array("{\"ok\":true,\"messageId\":\"00\",\"duplicate\":false}\n".utf8)
            _ = line.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            Glibc.close(client)
        }
    }
}
