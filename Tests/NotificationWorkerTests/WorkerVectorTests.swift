import Foundation
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Every case of the independent vectors (PROTOCOL §7, honouring SOTTO_VECTORS) through the
/// real binary in all three ways a push arrives, each on a freshly seeded group directory.
@Suite("Worker vectors")
struct WorkerVectorTests {
    @Test("Vector case through the real worker", arguments: Vectors.caseNames, DeliveryMode.allCases)
    func vectorCase(name: String, mode: DeliveryMode) throws {
        let vectors = try #require(try Vectors.load())
        let vector = try #require(vectors.cases.first { $0.name == name })
        let fixture = try WorkerFixture(vectors: vectors)
        let before = try fixture.snapshot()

        let ack = try WorkerRun.deliver(vector.payload, mode: mode, fixture: fixture)

        switch vector.expect {
        case .ok(let expected):
            let id = try #require(expected["id"]?.string)
            #expect(ack == .ok(messageId: id, duplicate: false), "\(name) in \(mode)")
            let row = try #require(try fixture.message(id: id), "\(name): no message row")
            #expect(row.conversationId == expected["conversationId"]?.string)
            #expect(row.senderInboxId == expected["senderInboxId"]?.string)
            #expect(row.sentAtMs == expected["sentAtMs"]?.int64)
            #expect(row.contentType == expected["contentType"]?.string)
            #expect(row.content == Base64URL.decode(expected["content"]?.string ?? "-"))
            #expect(row.fallback == expected["fallback"]?.string)
            if row.contentType == ContentType.explodeSettings {
                let content = try MessageContent.decode(contentType: row.contentType, content: row.content,
                                                        fallback: row.fallback)
                guard case .explodeSettings(let schedule) = content else {
                    Issue.record("explode content did not decode as explode settings")
                    return
                }
                #expect(try fixture.conversationExpiresAt() == schedule.expiresAtMs)
            } else {
                #expect(try fixture.conversationExpiresAt() == nil)
            }
            #expect(try fixture.snapshot()["change_log.maxSeq"]! > before["change_log.maxSeq"]!)
            #expect(try fixture.snapshotBesidesMessage(since: before) == before,
                    "an ok push wrote something besides its message and change_log row")
        case .error(let code):
            #expect(WorkerRun.errorCode(ack) == code, "\(name) in \(mode): \(ack)")
            #expect(try fixture.snapshot() == before, "\(name): a rejected push changed the database")
        }
    }

    @Test("Vector logs never carry plaintext or keys")
    func vectorLogsAreClean() throws {
        let vectors = try #require(try Vectors.load())
        let vector = try #require(vectors.cases.first { $0.name == "text_ok" })
        let fixture = try WorkerFixture(vectors: vectors)
        let result = try ChildProcess.run(try WorkerRun.worker(), ["--payload", "-"], environment: fixture.environment,
                                          stdin: String(decoding: vector.payload, as: UTF8.self) + "\n")
        #expect(result.status == 0)
        #expect(result.stdout.contains("\"ok\":true"))
        #expect(result.stderr.contains("push stored"))
        #expect(!result.stderr.contains("hello from alice"))
        #expect(!result.stderr.contains(Hex.encode(vectors.recipient.privateKey)))
    }
}
