import Foundation
import RelayTransport
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Bodies by reference through a relay (docs/protocol/bodies.md §6), all real: nats-server
/// -js, the real sotto-relayd, the real worker behind push.sock.
@Suite("Relay bodies", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayBodyTests {
    @Test("the body stream: a body is stored once, the first publish wins, garbage ids are refused")
    func bodyStream() throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        let relay = try rig.publisher()
        try relay.ensureBodyStream()
        try relay.ensureBodyStream()  // twice is fine
        let body = SealedBody.seal(Array(String(repeating: "long ", count: 2000).utf8))
        let id = Hex.encode(body.id)
        #expect(try relay.hasBody(id: id) == false)
        #expect(try relay.body(id: id) == nil)
        #expect(try relay.publishBody(body.sealed, id: id).duplicate == false)
        #expect(try relay.publishBody(body.sealed, id: id).duplicate == true)
        #expect(try relay.hasBody(id: id))
        #expect(try relay.body(id: id) == body.sealed)

        // A hostile publisher who learnt the id cannot replace the body: the relay refuses a
        // second message on the subject, and the first stays what a receiver fetches.
        let forged = SealedBody.seal(Array("forged".utf8), id: body.id).sealed
        let replaced: Bool
        do {
            let ack = try relay.publishBody(forged, id: id)
            replaced = !ack.duplicate
        } catch {
            replaced = false
        }
        #expect(!replaced)
        #expect(try relay.body(id: id) == body.sealed)
        #expect(try relay.bodyStreamUsage().messages == 1)

        for garbage in ["", "*", ">", "sotto.mb.x", String(repeating: "A", count: 32), "0123456789abcdef0123456789abcdef.x"] {
            #expect(throws: RelayError.self) { try relay.publishBody(body.sealed, id: garbage) }
            #expect(try relay.body(id: garbage) == nil)
        }
        #expect(try relay.bodyStreamUsage().messages == 1)
    }

    @Test("relayd hands a push with its body from the relay; the pushes around it keep their order; a missing body is terminated, logged, and the rest still arrive")
    func relaydDeliversBodies() throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        let relay = try rig.publisher()
        try relay.ensureBodyStream()
        let long = String(repeating: "the whole plan, step by step. ", count: 2200)  // ~66 KB: a body of 17 blocks
        let text = String(long.utf8.prefix(ContentLimits.maxTextBytes))!
        let withBody = rig.fixture.byReference(contentType: ContentType.text, content: Array(text.utf8), showTopic: false)
        let orphan = rig.fixture.byReference(contentType: ContentType.text, content: Array(text.utf8), showTopic: false)
        try relay.publishBody(withBody.body, id: withBody.bodyId)

        var expected: [String] = []
        for index in 0..<3 {
            let push = try rig.fixture.sealTextForRelay("before \(index)")
            try rig.publish(push)
            expected.append(push.messageId)
        }
        try rig.publish(withBody.push)
        expected.append(withBody.messageId)
        try rig.publish(orphan.push)  // its body was never published
        for index in 0..<3 {
            let push = try rig.fixture.sealTextForRelay("after \(index)")
            try rig.publish(push)
            expected.append(push.messageId)
        }

        try rig.startPushSocket()
        try rig.startRelayd()
        try waitUntil("7 pushes settled", timeout: 60) {
            try rig.storedMessageIds().count == expected.count && rig.publisher().storedCount(rig.mailbox) == 0
        }
        #expect(try rig.storedMessageIds() == expected)
        let row = try #require(try rig.fixture.message(id: withBody.messageId))
        #expect(row.contentType == ContentType.text)
        #expect(row.content == Array(text.utf8))
        #expect(try rig.fixture.message(id: orphan.messageId) == nil)
        #expect(rig.relaydOutput.contains { $0.contains("names body \(orphan.bodyId.prefix(8))") && $0.contains("does not hold") })
        try waitUntil("relayd logged the termination", timeout: 30) {
            rig.relaydOutput.contains { $0.contains("terminated") && $0.contains("body_missing") }
        }
        // The body stays for the other members until its age limit.
        #expect(try relay.hasBody(id: withBody.bodyId))
        // From the relay's side: what it stores of the body is its padded length and ciphertext,
        // nothing of the text (its own store files, as an operator would read them).
        let stored = try #require(try relay.body(id: withBody.bodyId))
        // One of the 9 size buckets (bodies.md §2), never the length to 4 KiB.
        #expect(BodySize.bucketBlocks.map { $0 * BodySize.blockBytes + 16 }.contains(stored.count), "\(stored.count)")
        #expect(stored.count >= text.utf8.count)
        #expect(FileSearch.files(containing: Array("the whole plan, step by step".utf8), under: rig.server.storeDirectory).isEmpty)
        #expect(!FileSearch.files(containing: Array(withBody.bodyId.utf8), under: rig.server.storeDirectory).isEmpty,
                "the search finds what the relay does store (the body's id)")
    }

    @Test("a body that is not the one its reference names is refused by the worker and terminated")
    func mismatchedBody() throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        let relay = try rig.publisher()
        try relay.ensureBodyStream()
        let push = rig.fixture.byReference(contentType: ContentType.text, content: Array(String(repeating: "x", count: 9000).utf8),
                                           showTopic: false)
        // Someone published other bytes under the id before the sender could (a relay operator).
        var forged = push.body
        forged[100] ^= 0xff
        try relay.publishBody(forged, id: push.bodyId)
        try rig.publish(push.push)
        let after = try rig.fixture.sealTextForRelay("after")
        try rig.publish(after)
        try rig.startPushSocket()
        try rig.startRelayd()
        try waitUntil("the later push stored", timeout: 60) { try rig.fixture.message(id: after.messageId) != nil }
        #expect(try rig.fixture.message(id: push.messageId) == nil)
        try waitUntil("relayd logged the termination", timeout: 30) {
            rig.relaydOutput.contains { $0.contains("terminated") && $0.contains("body_mismatch") }
        }
    }
}
