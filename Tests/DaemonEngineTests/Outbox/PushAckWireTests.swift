@testable import DaemonEngine
import Foundation
import SottoWire
import TestSupport
import Testing

/// The push ack has one parser, SharedStore's `PushAck`, which the worker writes it with:
/// the daemon's outbox (`PushDelivery`) reads every ack the worker can write, a real worker's
/// ack over a real push socket, and refuses garbage as "no valid ack line".
@Suite("Push ack: worker ↔ PushDelivery")
struct PushAckWireTests {
    @Test("every ack the worker can write reads back in PushDelivery with ok, duplicate, code and retry")
    func everyAck() {
        for duplicate in [false, true] {
            let line = PushAck.ok(messageId: "00ff", duplicate: duplicate).encodeLine()
            #expect(PushDelivery.parseAck(line) == .acked(.init(.ok(messageId: "00ff", duplicate: duplicate))))
            guard case .acked(let ack) = PushDelivery.parseAck(line) else { continue }
            #expect(ack.ok && ack.duplicate == duplicate && ack.error == nil && !ack.retry)
        }
        for code in PushErrorCode.allCases {
            guard case .acked(let ack) = PushDelivery.parseAck(PushAck.error(PushError(code, "detail \"quoted\"")).encodeLine()) else {
                Issue.record("\(code) not read")
                continue
            }
            #expect(!ack.ok && ack.error == code.rawValue && ack.retry == code.retry, "\(code)")
        }
    }

    @Test("garbage where an ack should be: unreachable (retry later), never a crash")
    func garbage() {
        let lines: [String] = ["", "\n", "garbage", "{}", #"{"ok":"yes"}"#, #"{"ok":true}"#, #"{"ok":false}"#, "[true]",
                               #"{"ok":true,"messageId":7}"#, #"{"ok":true,"messageId":"a","messageId":"b"}"#,
                               String(repeating: "{\"a\":", count: 5_000), String(repeating: "x", count: 70_000)]
        for line in lines {
            #expect(PushDelivery.parseAck(Array(line.utf8)) == .unreachable("no valid ack line"), "\(line.prefix(30))")
        }
        // An unknown error code from a newer worker: a rejection to retry (read as `internal`).
        guard case .acked(let ack) = PushDelivery.parseAck(Array(#"{"ok":false,"error":"new_code","retry":false}"#.utf8)) else {
            Issue.record("unknown code not read")
            return
        }
        #expect(!ack.ok && ack.error == "internal" && ack.retry)
    }

    @Test("a real worker behind a real push socket: PushDelivery reads its ok, its duplicate and its refusal")
    func realWorker() throws {
        let fixture = try WorkerFixture(vectors: try #require(try Vectors.load()))
        let server = try PushSocketServer.start(socketPath: fixture.tmp.path + "/push.sock", accept: true,
                                                command: [try builtExecutable("sotto-notify")], environment: fixture.environment)
        defer { server.stop() }
        let endpoint = "unix:" + server.socketPath
        let push = try fixture.sealText("through the real socket")
        #expect(PushDelivery.deliver(push.payload, to: endpoint) == .acked(.init(.ok(messageId: push.messageId, duplicate: false))))
        #expect(PushDelivery.deliver(push.payload, to: endpoint) == .acked(.init(.ok(messageId: push.messageId, duplicate: true))))
        guard case .acked(let refused) = PushDelivery.deliver(Array("not a push".utf8), to: endpoint) else {
            Issue.record("no ack for a malformed push")
            return
        }
        #expect(!refused.ok && refused.error == PushErrorCode.malformedPayload.rawValue && !refused.retry)
    }
}
