import Foundation
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Every case of docs/protocol/vectors/body-v1.json through the real worker, in all three
/// ways a push arrives, the body written after the payload's LF as a direct sender or
/// sotto-relayd writes it: an ok case stores the inner content under the outer message id
/// and nothing else; a refused one changes nothing.
@Suite("Worker body vectors")
struct WorkerBodyVectorTests {
    @Test("Body vector case through the real worker", arguments: Vectors.bodyCaseNames, DeliveryMode.allCases)
    func bodyVectorCase(name: String, mode: DeliveryMode) throws {
        let vectors = try Vectors.loadBodies()
        let vector = try #require(vectors.cases.first { $0.name == name })
        let fixture = try WorkerFixture(vectors: vectors)
        let before = try fixture.snapshot()

        let ack = try WorkerRun.deliver(vector.payload, body: vector.body, mode: mode, fixture: fixture)

        switch vector.expect {
        case .ok(let expected):
            let id = try #require(expected["id"]?.string)
            #expect(ack == .ok(messageId: id, duplicate: false), "\(name) in \(mode): \(ack)")
            let row = try #require(try fixture.message(id: id), "\(name): no message row")
            #expect(row.contentType == expected["contentType"]?.string)
            #expect(row.content == Base64URL.decode(expected["content"]?.string ?? "-"))
            #expect(try fixture.snapshotBesidesMessage(since: before) == before,
                    "an ok push wrote something besides its message, change_log row and receipt")
            #expect(try fixture.receiptsDue().map { "\($0.messageId) \($0.status)" } == ["\(id) delivered"])
        case .error(let code):
            #expect(WorkerRun.errorCode(ack) == code, "\(name) in \(mode): \(ack)")
            var after = try fixture.snapshot()
            // Refused for good once its signer, a member, is known: the one row written is the
            // failed receipt that tells it (docs/protocol/receipts.md §4).
            let due = try fixture.receiptsDue()
            if ["body_missing_empty", "body_missing_cut_short", "body_hash_mismatch", "body_wrong_key"].contains(name), mode != .payloadStdin {
                #expect(!due.isEmpty, "\(name): its member sender is owed a failed receipt")
            }
            if !due.isEmpty {
                #expect(["body_missing", "body_mismatch"].contains(code), "\(name): a receipt for a \(code) refusal")
                #expect(due.map { "\($0.status) \($0.error ?? "")" } == ["failed \(code)"], "\(name)")
                after["receipt_due"] = before["receipt_due"]
            }
            #expect(after == before, "\(name): a rejected push changed the database")
        }
    }

    @Test("A body that trickles in slower than the silence limit is a timeout, nothing stored")
    func silentBody() throws {
        let vectors = try Vectors.loadBodies()
        let vector = try #require(vectors.cases.first { $0.name == "text_5000_ok" })
        let fixture = try WorkerFixture(vectors: vectors)
        let before = try fixture.snapshot()
        let server = try PushSocketServer.start(socketPath: fixture.tmp.path + "/push.sock", accept: true,
                                                command: [try WorkerRun.worker()], environment: fixture.environment)
        defer { server.stop() }
        let fd = try PushClient.connect(to: server.socketPath)
        defer { close(fd) }
        // The payload and half the body, then silence with the connection open.
        try PushClient.writeAll(fd, vector.payload + [0x0a] + Array((vector.body ?? []).prefix(2000)))
        let line = try PushClient.readAll(fd).trimmingCharacters(in: .newlines)
        let ack = try #require(PushAck.parse(Array(line.utf8)))
        #expect(WorkerRun.errorCode(ack) == "timeout")
        #expect(try fixture.snapshot() == before)
    }

    @Test("The worker keeps its budget with the largest body the protocol allows")
    func largestBody() throws {
        let vectors = try Vectors.loadBodies()
        let fixture = try WorkerFixture(vectors: vectors)
        let content = Array(String(repeating: "0123456789abcdef", count: 65_536 / 16).utf8)
        // Largest body: a reply whose JSON fills the content limit (its text within 64 KiB).
        let reply = JSONWriter.bytes(["reference": .string(Hex.encode(SecureRandom.bytes(16))),
                                      "text": .string(String(decoding: content, as: UTF8.self)),
                                      "pad": .string(String(repeating: "p", count: BodySize.maxContentBytes - content.count - 80))])
        #expect(reply.count <= BodySize.maxContentBytes)
        let push = fixture.byReference(contentType: ContentType.reply, content: reply)
        #expect(push.body.count == BodySize.maxSealedBytes)
        // The unit's MemoryMax is 24M (systemd/sotto-push@.service): measured here as the peak RSS.
        let result = try ChildProcess.run("/usr/bin/time", ["-f", "RSS %M", try WorkerRun.worker(), "--payload", "-"],
                                          environment: fixture.environment, stdinBytes: push.payload + [0x0a] + push.body)
        #expect(result.stdout.contains("\"ok\":true"), "\(result.stdout) \(result.stderr)")
        let rss = result.stderr.split(separator: "\n").last { $0.hasPrefix("RSS ") }.flatMap { Int($0.dropFirst(4)) }
        #expect((rss ?? Int.max) < 24 * 1024, "peak RSS \(rss ?? -1) KiB")
        let row = try #require(try fixture.message(id: push.messageId))
        #expect(row.content == reply)
    }
}
