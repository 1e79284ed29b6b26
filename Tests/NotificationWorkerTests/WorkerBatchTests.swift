import Foundation
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// The batch extension of push.sock (docs/push-batch.md, docs/adr/0027) through the real
/// worker on real sockets: many pushes on one connection, one commit, one ack per push; a bad
/// push in the middle rejected alone; a kill -9 before or after the commit loses nothing and
/// duplicates nothing; a §2 sender never enters it.
@Suite("Worker batches")
struct WorkerBatchTests {
    private func fixture() throws -> WorkerFixture {
        try WorkerFixture(vectors: try #require(try Vectors.load()))
    }

    private func server(_ f: WorkerFixture, acceptYes: Bool, environment extra: [String: String] = [:]) throws -> PushSocketServer {
        let worker = try WorkerRun.worker()
        return try PushSocketServer.start(socketPath: f.tmp.path + "/push.sock", accept: acceptYes,
                                          command: acceptYes ? [worker] : [worker, "--idle-timeout", "5"],
                                          environment: f.environment.merging(extra) { $1 })
    }


    private func storedIds(_ f: WorkerFixture) throws -> [String] {
        try f.open().query("SELECT id FROM message ORDER BY rowid").map { try $0.string(0) }
    }

    @Test("A batch with garbage, an oversize line, a duplicate and a refused push in the middle: each acked on its own, only the good ones stored, in order",
          arguments: [true, false])
    func mixedBatch(acceptYes: Bool) throws {
        let f = try fixture()
        let first = try f.sealTextForRelay("first")
        let second = try f.sealText("second")
        let third = try f.sealTextForRelay("third")
        let stranger = try f.seal(contentType: ContentType.text, content: Array("not a member".utf8),
                                  signer: PrivateKey.generate())
        let garbage: [UInt8] = [0xff, 0xfe, 0x00, 0x7b, 0x80, 0xc3, 0x28, 0x01]
        let oversize = [UInt8](repeating: UInt8(ascii: "a"), count: 5_000)
        let socket = try server(f, acceptYes: acceptYes)
        defer { socket.stop() }
        let changesBefore = try f.snapshot()["change_log"] ?? 0

        let acks = try PushClient.sendBatch([first.payload, garbage, second.payload, first.payload, stranger.payload,
                                  oversize, [], third.payload], to: socket.socketPath)
        #expect(acks.count == 8)
        #expect(acks[0] == .ok(messageId: first.messageId, duplicate: false))
        #expect(acks[1].flatMap(WorkerRun.errorCode) == "malformed_payload")
        #expect(acks[2] == .ok(messageId: second.messageId, duplicate: false))
        #expect(acks[3] == .ok(messageId: first.messageId, duplicate: true))
        #expect(acks[4].flatMap(WorkerRun.errorCode) == "unknown_sender")
        #expect(acks[5].flatMap(WorkerRun.errorCode) == "payload_too_large")
        #expect(acks[6].flatMap(WorkerRun.errorCode) == "malformed_payload")
        #expect(acks[7] == .ok(messageId: third.messageId, duplicate: false))
        #expect(try storedIds(f) == [first.messageId, second.messageId, third.messageId])
        #expect(try f.message(id: stranger.messageId) == nil)
        let snapshot = try f.snapshot()
        #expect(snapshot["change_log"] == changesBefore + 3, "one change per stored message: \(snapshot)")

        // The same batch again: every good push is a duplicate and nothing is written.
        let again = try PushClient.sendBatch([first.payload, second.payload, third.payload], to: socket.socketPath)
        #expect(again == [.ok(messageId: first.messageId, duplicate: true),
                          .ok(messageId: second.messageId, duplicate: true),
                          .ok(messageId: third.messageId, duplicate: true)])
        #expect(try f.snapshot() == snapshot)
    }

    @Test("One worker start and one commit serve a whole batch (the worker logs one batch line for 200 pushes)")
    func oneStartForMany() throws {
        let f = try fixture()
        let pushes = try (0..<200).map { try f.sealTextForRelay("many \($0)") }
        let socket = try server(f, acceptYes: true)
        defer { socket.stop() }
        let acks = try PushClient.sendBatch(pushes.map(\.payload), to: socket.socketPath)
        #expect(acks == pushes.map { .ok(messageId: $0.messageId, duplicate: false) })
        #expect(try storedIds(f) == pushes.map(\.messageId))
        try waitFor("the worker's batch line", timeout: 10) { socket.log.contains("batch of 200: 200 stored") }
        #expect(socket.log.components(separatedBy: "batch of").count == 2, "\(socket.log.suffix(400))")
    }

    @Test("kill -9 of the worker before its commit: no ack, nothing written; the batch sent again stores each once")
    func killedBeforeCommit() throws {
        let f = try fixture()
        let pushes = try (0..<20).map { try f.sealTextForRelay("before commit \($0)") }
        let before = try f.snapshot()
        let crashing = try server(f, acceptYes: true, environment: [CrashPoint.variable: "batch.beforeCommit"])
        let acks = try PushClient.sendBatch(pushes.map(\.payload), to: crashing.socketPath)
        crashing.stop()
        #expect(acks.allSatisfy { $0 == nil }, "\(acks)")
        #expect(try f.snapshot() == before)

        let socket = try server(f, acceptYes: true)
        defer { socket.stop() }
        let retried = try PushClient.sendBatch(pushes.map(\.payload), to: socket.socketPath)
        #expect(retried == pushes.map { .ok(messageId: $0.messageId, duplicate: false) })
        #expect(try storedIds(f) == pushes.map(\.messageId))
    }

    @Test("kill -9 of the worker after its commit, before the acks: the batch sent again is all duplicates, nothing twice")
    func killedAfterCommit() throws {
        let f = try fixture()
        let pushes = try (0..<20).map { try f.sealTextForRelay("after commit \($0)") }
        let crashing = try server(f, acceptYes: true, environment: [CrashPoint.variable: "batch.committed"])
        let acks = try PushClient.sendBatch(pushes.map(\.payload), to: crashing.socketPath)
        crashing.stop()
        #expect(acks.allSatisfy { $0 == nil }, "\(acks)")
        #expect(try storedIds(f) == pushes.map(\.messageId))
        let afterCrash = try f.snapshot()

        let socket = try server(f, acceptYes: true)
        defer { socket.stop() }
        let retried = try PushClient.sendBatch(pushes.map(\.payload), to: socket.socketPath)
        #expect(retried == pushes.map { .ok(messageId: $0.messageId, duplicate: true) })
        #expect(try f.snapshot() == afterCrash)
    }

    @Test("A write-locked database: every push of the batch is busy and nothing is written; garbage keeps its own error")
    func busyBatch() throws {
        let f = try fixture()
        let pushes = try (0..<5).map { try f.sealTextForRelay("locked \($0)") }
        let socket = try server(f, acceptYes: true, environment: ["SOTTO_BUSY_TIMEOUT_MS": "100"])
        defer { socket.stop() }
        let sqlite = try ChildProcess.launch("/usr/bin/sqlite3", [f.group.databasePath])
        sqlite.write("PRAGMA busy_timeout=5000;\nBEGIN IMMEDIATE;\nSELECT 'locked';\n")
        #expect(sqlite.waitForLine(containing: "locked") != nil)
        let before = try f.snapshot()
        let acks = try PushClient.sendBatch([pushes[0].payload, Array("garbage".utf8)] + pushes[1...].map(\.payload), to: socket.socketPath)
        sqlite.write("ROLLBACK;\n.quit\n")
        #expect(sqlite.waitForExit() == 0)
        #expect(acks.count == 6)
        #expect(acks[1].flatMap(WorkerRun.errorCode) == "malformed_payload")
        for index in [0, 2, 3, 4, 5] { #expect(acks[index].flatMap(WorkerRun.errorCode) == "busy", "\(index): \(String(describing: acks[index]))") }
        #expect(try f.snapshot() == before)
    }

    @Test("A push to retry in the middle (its identity file is corrupt: internal): the ones before are stored, every later one is busy and not stored, so the order holds")
    func retryHoldsBackTheRest() throws {
        let f = try fixture()
        let pushes = try (0..<4).map { try f.sealTextForRelay("around a retry \($0)") }
        let brokenClientId = SecureRandom.uuidV4()
        let brokenPath = f.group.keystorePath + "/" + brokenClientId + ".identity"
        #expect(FileManager.default.createFile(atPath: brokenPath, contents: Data(repeating: 0x41, count: 200),
                                               attributes: [.posixPermissions: 0o600]))
        let envelope = Envelope.seal(Array("x".utf8), recipient: PrivateKey.generate().publicKey,
                                     clientId: brokenClientId, topic: f.recipient.topic)
        let toRetry = PushPayload(clientId: brokenClientId, topic: f.recipient.topic, envelope: envelope).encode()
        let socket = try server(f, acceptYes: true)
        defer { socket.stop() }

        let acks = try PushClient.sendBatch([pushes[0].payload, pushes[1].payload, toRetry, pushes[2].payload,
                                  Array("garbage".utf8), pushes[3].payload], to: socket.socketPath)
        #expect(acks[0] == .ok(messageId: pushes[0].messageId, duplicate: false))
        #expect(acks[1] == .ok(messageId: pushes[1].messageId, duplicate: false))
        #expect(acks[2].flatMap(WorkerRun.errorCode) == "internal")
        for index in 3..<6 { #expect(acks[index].flatMap(WorkerRun.errorCode) == "busy", "\(index): \(String(describing: acks[index]))") }
        #expect(try storedIds(f) == [pushes[0].messageId, pushes[1].messageId])

        // The identity repaired (here: gone, so the push is refused for good): the rest follows in order.
        unlink(brokenPath)
        let retried = try PushClient.sendBatch([toRetry, pushes[2].payload, pushes[3].payload], to: socket.socketPath)
        #expect(retried[0].flatMap(WorkerRun.errorCode) == "unknown_client")
        #expect(try storedIds(f) == pushes.map(\.messageId))
    }

    @Test("Random garbage lines around two valid pushes: every garbage line gets a refusal, the two are stored, nothing else is written",
          arguments: [true, false])
    func garbageLines(acceptYes: Bool) throws {
        let f = try fixture()
        var generator = SystemRandomNumberGenerator()
        let good = try (0..<2).map { try f.sealTextForRelay("among garbage \($0)") }
        var lines: [[UInt8]] = [Array("{}".utf8), Array("{\"version\":1}".utf8), [0x0d], [0x00], [UInt8](repeating: 0x7b, count: 4_096)]
        for _ in 0..<40 {
            lines.append((0..<Int.random(in: 1...900, using: &generator)).map { _ in
                var byte = UInt8.random(in: 0...255, using: &generator)
                if byte == 0x0a { byte = 0x0b }   // one line each
                return byte
            })
        }
        lines.insert(good[0].payload, at: 10)
        lines.append(good[1].payload)
        let changesBefore = try f.snapshot()["change_log"] ?? 0
        let socket = try server(f, acceptYes: acceptYes)
        defer { socket.stop() }
        let acks = try PushClient.sendBatch(lines, to: socket.socketPath)
        #expect(acks.count == lines.count)
        for (index, ack) in acks.enumerated() {
            if index == 10 || index == lines.count - 1 { continue }
            let code = ack.flatMap(WorkerRun.errorCode)
            #expect(code != nil && code != "busy" && code != "internal", "line \(index): \(String(describing: ack))")
        }
        #expect(acks[10] == .ok(messageId: good[0].messageId, duplicate: false))
        #expect(acks.last == .ok(messageId: good[1].messageId, duplicate: false))
        #expect(try storedIds(f) == good.map(\.messageId))
        #expect(try f.snapshot()["change_log"] == changesBefore + 2)
    }

    @Test("More lines than a batch takes: the first 256 are acked and stored, the rest get no ack and are not stored")
    func overTheLimit() throws {
        let f = try fixture()
        let pushes = try (0..<(PushBatchExchange.maxPushes + 20)).map { try f.sealTextForRelay("limit \($0)") }
        let socket = try server(f, acceptYes: true)
        defer { socket.stop() }
        let fd = try PushClient.connect(to: socket.socketPath)
        defer { close(fd) }
        var request = PushBatchExchange.openingLine + [0x0a]
        for push in pushes { request += push.payload + [0x0a] }
        try PushClient.writeAll(fd, request)
        shutdown(fd, Int32(SHUT_WR))
        let reply = Array(try PushClient.readAll(fd).utf8)
        guard case .acked(let outcomes) = PushBatchExchange.parse(reply, count: pushes.count) else {
            Issue.record("not a batch answer")
            return
        }
        let taken = PushBatchExchange.maxPushes
        #expect(outcomes[..<taken].allSatisfy { if case .acked(.ok) = $0 { true } else { false } })
        #expect(outcomes[taken...].allSatisfy { if case .noAck = $0 { true } else { false } })
        #expect(try storedIds(f) == pushes[..<taken].map(\.messageId))
    }

    @Test("A §2 sender never enters a batch: the opening line as a payload, unterminated or on stdin, is malformed_payload",
          arguments: DeliveryMode.allCases)
    func openingLineAsSinglePush(mode: DeliveryMode) throws {
        let f = try fixture()
        let before = try f.snapshot()
        // As its only line (LF, then half-close): a batch of nothing would answer differently.
        if mode == .payloadStdin {
            let ack = try WorkerRun.deliver(PushBatchExchange.openingLine, mode: mode, fixture: f)
            #expect(WorkerRun.errorCode(ack) == "malformed_payload")
        } else {
            let socket = try server(f, acceptYes: mode == .acceptYes)
            defer { socket.stop() }
            // Without its LF (a §2 sender that half-closes): a single push.
            let line = try PushClient.send(PushBatchExchange.openingLine, to: socket.socketPath, newline: false)
            #expect(WorkerRun.errorCode(try #require(PushAck.parse(Array(line.utf8)))) == "malformed_payload")
            // With more on the same line: a single push.
            let longer = try PushClient.send(PushBatchExchange.openingLine + Array(" {}".utf8), to: socket.socketPath)
            #expect(WorkerRun.errorCode(try #require(PushAck.parse(Array(longer.utf8)))) == "malformed_payload")
        }
        #expect(try f.snapshot() == before)
    }

    @Test("The batch answer parser: a worker that does not speak batches, a cut answer, garbage")
    func answerParser() {
        let malformed = Array(#"{"ok":false,"error":"malformed_payload","retry":false,"detail":"x"}"#.utf8) + [0x0a]
        #expect(PushBatchExchange.parse(malformed, count: 3) == .notSpoken)
        let ok = Array(#"{"ok":true,"messageId":"ab","duplicate":false}"#.utf8)
        let cut = PushBatchExchange.acceptedLine + [0x0a] + ok + [0x0a] + ok
        guard case .acked(let outcomes) = PushBatchExchange.parse(cut, count: 3) else {
            Issue.record("not acked")
            return
        }
        #expect(outcomes[0] == .acked(.ok(messageId: "ab", duplicate: false)))
        #expect(outcomes[1...].allSatisfy { if case .noAck = $0 { true } else { false } })
        let garbage: [UInt8] = [0xff, 0x00, 0x0a, 0x41, 0x0a]
        guard case .acked(let none) = PushBatchExchange.parse(garbage, count: 2) else {
            Issue.record("garbage parsed as not spoken")
            return
        }
        #expect(none.allSatisfy { if case .noAck = $0 { true } else { false } })
        guard case .acked(let empty) = PushBatchExchange.parse([], count: 1) else { return }
        #expect(empty.count == 1)
    }
}

/// Polls `condition` until it holds or `timeout` seconds pass.
private func waitFor(_ what: String, timeout: TimeInterval, _ condition: () throws -> Bool) throws {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while Date() < deadline {
        if try condition() { return }
        usleep(20_000)
    }
    Issue.record("timed out waiting for \(what)")
}
