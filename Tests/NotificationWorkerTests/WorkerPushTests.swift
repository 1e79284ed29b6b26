import Foundation
import DaemonStore
import SharedStore
import SottoWire
import TestSupport
import Testing

/// Pushes that are not vectors: duplicates, bad framing, silent and vanishing senders, bursts,
/// a locked or missing database, through the real binary and real sockets.
@Suite("Worker pushes")
struct WorkerPushTests {
    private func fixture() throws -> WorkerFixture {
        try WorkerFixture(vectors: try #require(try Vectors.load()))
    }

    private func acceptYesServer(_ f: WorkerFixture, environment extra: [String: String] = [:]) throws -> PushSocketServer {
        try PushSocketServer.start(socketPath: f.tmp.path + "/push.sock", accept: true, command: [try WorkerRun.worker()],
                                   environment: f.environment.merging(extra) { $1 })
    }

    private func ack(_ line: String) throws -> PushAck {
        try #require(PushAck.parse(Array(line.utf8)), "not an ack: \(line)")
    }

    @Test("A second push of the same message acks duplicate and writes nothing", arguments: DeliveryMode.allCases)
    func duplicate(mode: DeliveryMode) throws {
        let f = try fixture()
        let push = try f.sealText("once")
        #expect(try WorkerRun.deliver(push.payload, mode: mode, fixture: f) == .ok(messageId: push.messageId, duplicate: false))
        let afterFirst = try f.snapshot()
        #expect(try WorkerRun.deliver(push.payload, mode: mode, fixture: f) == .ok(messageId: push.messageId, duplicate: true))
        #expect(try f.snapshot() == afterFirst)
        #expect(afterFirst["message"] == 1)
    }

    @Test("A push to a tombstoned identity (rows deleted, key files not yet wiped) is unknown_client and writes nothing",
          arguments: DeliveryMode.allCases)
    func tombstonedIdentity(mode: DeliveryMode) throws {
        let f = try fixture()
        let push = try f.sealText("after the explosion")
        // What a daemon killed between the deletion's commit and the keystore wipe leaves (ADR 0016).
        let conn = try f.open()
        try conn.immediateTransaction { () throws(StoreError) in
            _ = try InboxDeletion.delete(inboxId: f.recipient.inboxId, on: conn)
        }
        let before = try f.snapshot()
        let ack = try WorkerRun.deliver(push.payload, mode: mode, fixture: f)
        #expect(WorkerRun.errorCode(ack) == "unknown_client", "\(ack)")
        #expect(try f.snapshot() == before)
    }

    @Test("A push to a tombstoned identity whose file a power cut brought back zeroed (the wipe's rename undone, its zeros kept: docs/adr/0058) is unknown_client, not a corrupt keystore, and writes nothing",
          arguments: DeliveryMode.allCases)
    func tombstonedIdentityZeroedByPowerCut(mode: DeliveryMode) throws {
        let f = try fixture()
        let push = try f.sealText("after the explosion and the power cut")
        let conn = try f.open()
        try conn.immediateTransaction { () throws(StoreError) in
            _ = try InboxDeletion.delete(inboxId: f.recipient.inboxId, on: conn)
        }
        // The wipe zeroed and fsynced the file under `.deleted-*`; the cut undid the rename.
        let path = f.group.keystorePath + "/\(f.recipient.clientId).identity"
        let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        try Data(count: size).write(to: URL(fileURLWithPath: path))
        let before = try f.snapshot()
        let ack = try WorkerRun.deliver(push.payload, mode: mode, fixture: f)
        #expect(WorkerRun.errorCode(ack) == "unknown_client", "\(ack)")
        #expect(try f.snapshot() == before)
    }

    @Test("Oversize, garbage and empty payloads are rejected and write nothing",
          arguments: [("oversize", "payload_too_large"), ("garbage", "malformed_payload"), ("empty", "malformed_payload")])
    func badPayloads(kind: String, code: String) throws {
        let f = try fixture()
        let before = try f.snapshot()
        let bytes: [UInt8]
        switch kind {
        case "oversize": bytes = Array(repeating: UInt8(ascii: "a"), count: 5000)
        case "garbage": bytes = [0xff, 0xfe, 0x00, 0x7b, 0x80, 0xc3, 0x28, 0x01]
        default: bytes = []
        }
        let server = try acceptYesServer(f)
        defer { server.stop() }
        let ack = try ack(try PushClient.send(bytes, to: server.socketPath))
        #expect(WorkerRun.errorCode(ack) == code)
        #expect(try f.snapshot() == before)
    }

    @Test("A sender that connects and says nothing gets timeout after 5 s")
    func silentSender() throws {
        let f = try fixture()
        let server = try acceptYesServer(f)
        defer { server.stop() }
        let fd = try PushClient.connect(to: server.socketPath)
        defer { close(fd) }
        let start = Date()
        let line = try PushClient.readAll(fd)   // blocks until the worker acks and closes
        let elapsed = Date().timeIntervalSince(start)
        #expect(WorkerRun.errorCode(try ack(line.trimmingCharacters(in: .newlines))) == "timeout")
        #expect(line.contains("\"retry\":true"))
        // Not before the 5 s read timeout; well before the 30 s budget would end the worker
        // (a loaded machine can delay the worker's start by seconds, not by 24).
        #expect(elapsed >= 4.5 && elapsed < 29, "timeout after \(elapsed) s")
    }

    @Test("A sender that vanishes mid-payload: the worker exits cleanly and writes nothing")
    func vanishingSender() throws {
        let f = try fixture()
        let before = try f.snapshot()
        let push = try f.sealText("cut short")
        // The worker gets the connection on stdin/stdout (StandardInput=socket), so this
        // test sees its exit status.
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try WorkerRun.worker())
        process.environment = ProcessInfo.processInfo.environment.merging(f.environment) { $1 }
        let workerEnd = FileHandle(fileDescriptor: pair[1], closeOnDealloc: true)
        process.standardInput = workerEnd
        process.standardOutput = workerEnd
        let stderr = Pipe()
        process.standardError = stderr
        try process.run()
        try? workerEnd.close()
        try PushClient.writeAll(pair[0], Array(push.payload.prefix(push.payload.count / 2)))
        close(pair[0])
        let log = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit, "worker died of a signal")
        #expect(process.terminationStatus == 0)
        #expect(String(decoding: log, as: UTF8.self).contains("malformed_payload"))
        #expect(try f.snapshot() == before)

        // And the push socket still serves the next sender.
        let server = try acceptYesServer(f)
        defer { server.stop() }
        #expect(try ack(try PushClient.send(push.payload, to: server.socketPath)) == .ok(messageId: push.messageId, duplicate: false))
    }

    @Test("64 senders at once, distinct valid messages: all acked ok, all stored", arguments: [true, false])
    func manyAtOnce(accept: Bool) throws {
        let f = try fixture()
        let pushes = try (0..<64).map { try f.sealText("burst \($0)") }
        let server = try PushSocketServer.start(
            socketPath: f.tmp.path + "/push.sock", accept: accept,
            command: accept ? [try WorkerRun.worker()] : [try WorkerRun.worker(), "--idle-timeout", "1"],
            environment: f.environment)
        defer { server.stop() }
        // Connect all, then send all, then read all: the workers run concurrently.
        let fds = try pushes.map { _ in try PushClient.connect(to: server.socketPath) }
        defer { fds.forEach { close($0) } }
        for (fd, push) in zip(fds, pushes) {
            try PushClient.writeAll(fd, push.payload + [0x0a])
        }
        for (fd, push) in zip(fds, pushes) {
            let line = try PushClient.readAll(fd).trimmingCharacters(in: .newlines)
            #expect(try ack(line) == .ok(messageId: push.messageId, duplicate: false))
        }
        let snapshot = try f.snapshot()
        #expect(snapshot["message"] == 64)
        for push in pushes { #expect(try f.message(id: push.messageId) != nil) }
    }

    @Test("A sender still writing an oversize payload gets payload_too_large, not EPIPE or a reset",
          arguments: [true, false])
    func oversizeStillWriting(accept: Bool) throws {
        let f = try fixture()
        let before = try f.snapshot()
        let server = try PushSocketServer.start(
            socketPath: f.tmp.path + "/push.sock", accept: accept,
            command: accept ? [try WorkerRun.worker()] : [try WorkerRun.worker(), "--idle-timeout", "1"],
            environment: f.environment)
        defer { server.stop() }
        // Far more than the socket buffers hold: the worker has acked long before the last byte.
        let line = try PushClient.send(Array(repeating: UInt8(ascii: "a"), count: 512 * 1024), to: server.socketPath,
                                       newline: false)
        #expect(WorkerRun.errorCode(try ack(line)) == "payload_too_large")
        #expect(try f.snapshot() == before)
    }

    @Test("Accept=no, alone, WAL reset after every push: each push reopens the database, all stored, WAL left empty")
    func acceptNoReopensAfterWALReset() throws {
        let f = try fixture()
        let pushes = try (0..<5).map { try f.sealText("reopen \($0)") }
        let server = try PushSocketServer.start(
            socketPath: f.tmp.path + "/push.sock", accept: false,
            command: [try WorkerRun.worker(), "--idle-timeout", "0.3"],
            environment: f.environment.merging(["SOTTO_WORKER_WAL_RESET_BYTES": "0"]) { $1 })
        for push in pushes {
            #expect(try ack(try PushClient.send(push.payload, to: server.socketPath))
                    == .ok(messageId: push.messageId, duplicate: false))
        }
        let (status, log) = server.waitForExit()
        #expect(status == 0)
        // Nobody else had the file open: every close checkpointed and truncated the WAL.
        #expect(log.components(separatedBy: "alone: WAL checkpointed on close").count - 1 == pushes.count, "\(log)")
        var info = stat()
        #expect(stat(f.group.databasePath + "-wal", &info) == 0 && info.st_size == 0)
        #expect(try f.snapshot()["message"] == Int64(pushes.count))
    }

    // MARK: - The database

    /// A foreign sqlite3 holding BEGIN IMMEDIATE on the fixture's database until told.
    private func lockHolder(_ f: WorkerFixture) throws -> ChildProcess {
        let sqlite = try ChildProcess.launch("/usr/bin/sqlite3", [f.group.databasePath])
        sqlite.write("PRAGMA busy_timeout=5000;\nBEGIN IMMEDIATE;\nSELECT 'locked';\n")
        #expect(sqlite.waitForLine(containing: "locked") != nil)
        return sqlite
    }

    @Test("A foreign write lock shorter than the busy timeout: the worker waits and succeeds")
    func shortLock() throws {
        let f = try fixture()
        let push = try f.sealText("after the lock")
        let sqlite = try lockHolder(f)
        let worker = try ChildProcess.launch(try WorkerRun.worker(), ["--payload", "-"], environment: f.environment)
        worker.write(String(decoding: push.payload, as: UTF8.self) + "\n")
        // Committed only once the worker waits for the lock (its busy handler sleeps).
        #expect(ProcessProbe.waitUntilSleeping(pid: worker.pid, timeout: 10), "the worker never waited for the lock")
        #expect(try f.message(id: push.messageId) == nil)
        sqlite.write("COMMIT;\n.quit\n")
        let result = worker.finish()
        #expect(sqlite.waitForExit() == 0)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try ack(result.stdout.trimmingCharacters(in: .newlines)) == .ok(messageId: push.messageId, duplicate: false))
        #expect(try f.message(id: push.messageId) != nil)
    }

    @Test("A foreign write lock past the busy timeout: busy, retry, nothing written")
    func longLock() throws {
        let f = try fixture()
        let before = try f.snapshot()
        let push = try f.sealText("never stored")
        let sqlite = try lockHolder(f)
        var environment = f.environment
        environment["SOTTO_BUSY_TIMEOUT_MS"] = "200"
        let result = try ChildProcess.run(try WorkerRun.worker(), ["--payload", "-"], environment: environment,
                                          stdin: String(decoding: push.payload, as: UTF8.self) + "\n")
        sqlite.write("ROLLBACK;\n.quit\n")
        #expect(sqlite.waitForExit() == 0)
        let line = result.stdout.trimmingCharacters(in: .newlines)
        #expect(WorkerRun.errorCode(try ack(line)) == "busy")
        #expect(line.contains("\"retry\":true"))
        #expect(result.status == 75)
        #expect(try f.snapshot() == before)
    }

    @Test("A schema newer than the worker: retryable error, nothing written")
    func newerSchema() throws {
        let f = try fixture()
        try f.open().execute("PRAGMA user_version = 9999")
        let before = try f.snapshot()
        let push = try f.sealText("from the future")
        let result = try ChildProcess.run(try WorkerRun.worker(), ["--payload", "-"], environment: f.environment,
                                          stdin: String(decoding: push.payload, as: UTF8.self) + "\n")
        let line = result.stdout.trimmingCharacters(in: .newlines)
        #expect(line.contains("\"ok\":false") && line.contains("\"retry\":true"), "\(line)")
        #expect(result.status == 75)
        #expect(try f.snapshot() == before)
    }

    @Test("A missing database: retryable error and no file created")
    func missingDatabase() throws {
        let f = try fixture()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: f.group.databasePath + suffix) }
        let push = try f.sealText("nowhere to go")
        let result = try ChildProcess.run(try WorkerRun.worker(), ["--payload", "-"], environment: f.environment,
                                          stdin: String(decoding: push.payload, as: UTF8.self) + "\n")
        let line = result.stdout.trimmingCharacters(in: .newlines)
        #expect(line.contains("\"ok\":false") && line.contains("\"retry\":true"), "\(line)")
        #expect(!FileManager.default.fileExists(atPath: f.group.databasePath))
    }
}
