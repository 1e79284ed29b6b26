import Foundation
import RelayTransport
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Delivery receipts through a relay (docs/protocol/receipts.md), all real: nats-server -js,
/// two daemons with `SOTTO_RELAY`, each with its own sotto-relayd and worker. A receipt
/// travels like any push, through the sender's mailbox; a push the recipient's relayd must
/// terminate (its body is gone from the relay) ends `failed` with its reason on the sender.
@Suite("Relay receipts", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayReceiptTests {
    @Test("relayed becomes delivered once the member's device stored the message and its receipt came back through the relay")
    func relayedBecomesDelivered() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let sent = try peers.send("alice", trip, "through the relay")
            try peers["alice"].waitUntil("bob's receipt came back", timeoutMs: 60_000) {
                try peers.outboxStates("alice", messageId: sent).map(\.state) == ["delivered"]
            }
            #expect(peers.message("alice", trip, id: sent)?["deliveryStatus"] as? String == "delivered")
            #expect(try peers.storedTexts("bob", trip) == ["through the relay"])
        }
    }

    @Test("what receipts cost: 25 messages bob's relayd catches up on come back as ceil(25 / 20) = 2 receipt pushes in alice's mailbox, and all end delivered")
    func receiptsBatch() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let aliceMailbox = try peers.mailbox("alice", trip)
            let relay = try peers.relay()
            try peers["alice"].waitUntil("the join's own receipts are in") {
                try relay.storedCount(aliceMailbox) == 0 && peers["bob"].query("SELECT count(*) FROM outliving_notice")[0].int64(0) == 0
            }
            peers.stopRelayd("alice")
            peers.stopRelayd("bob")
            let count = 25
            var sent: [String] = []
            for index in 0..<count { sent.append(try peers.send("alice", trip, "queued \(index)")) }
            try peers["alice"].waitUntil("all relayed", timeoutMs: 60_000) {
                try sent.allSatisfy { try peers.outboxStates("alice", messageId: $0).map(\.state) == ["relayed"] }
            }
            #expect(try relay.storedCount(aliceMailbox) == 0)

            try peers.startRelayd("bob")  // one fetch, one worker commit of 25 pushes
            try peers["bob"].waitUntil("bob stored all and sent his receipts", timeoutMs: 60_000) {
                try peers.storedTexts("bob", trip).count == count
                    && peers["bob"].query("SELECT count(*) FROM receipt_due")[0].int64(0) == 0
                    && peers["bob"].query("SELECT count(*) FROM outliving_notice")[0].int64(0) == 0
            }
            let receipts = try relay.storedCount(aliceMailbox)
            print("receipt pushes for \(count) messages caught up by one member: \(receipts)")
            #expect(receipts == UInt64((count + Receipt.maxEntries - 1) / Receipt.maxEntries))

            try peers.startRelayd("alice")
            try peers["alice"].waitUntil("all delivered", timeoutMs: 60_000) {
                try sent.allSatisfy { try peers.outboxStates("alice", messageId: $0).map(\.state) == ["delivered"] }
            }
        }
    }

    @Test("a push bob's relayd must terminate (its body expired on the relay) ends failed body_missing on alice, with nothing stored on bob")
    func terminatedPushFailsOnTheSender() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            peers.stopRelayd("bob")
            let long = String(repeating: "a long plan, step by step. ", count: 400)  // ~10 KB: by reference
            let sent = try peers.send("alice", trip, long)
            try peers["alice"].waitUntil("the push and its body on the relay", timeoutMs: 60_000) {
                try peers.outboxStates("alice", messageId: sent).map(\.state) == ["relayed"]
            }
            let bodyId = try require(try peers["alice"].query("""
                SELECT payload FROM outbox WHERE messageId = ?
                """, [.text(sent)]).first.map { try PushPayload.decode(try $0.blob(0)).body?.id } ?? nil, "body id")
            let relay = try peers.relay()
            #expect(try relay.hasBody(id: bodyId))
            try relay.expireBody(id: bodyId)
            #expect(try !relay.hasBody(id: bodyId))

            try peers.startRelayd("bob")
            try peers["alice"].waitUntil("bob's failed receipt came back", timeoutMs: 60_000) {
                try peers.outboxStates("alice", messageId: sent).map(\.state) == ["failed"]
            }
            let state = try #require(try peers.outboxStates("alice", messageId: sent).first)
            #expect(state.lastError == ReceiptWriter.failureReason("body_missing"))
            let shown = try require(peers.message("alice", trip, id: sent))
            #expect(shown["deliveryStatus"] as? String == "failed")
            let read = try peers["alice"].cli(["read", trip]).stdout
            #expect(read.contains("(failed; body_missing (reported by the member's device))"), "\(read)")
            #expect(peers.relaydOutput("bob").contains { $0.contains("terminated") && $0.contains("body_missing") })
            #expect(try peers.storedTexts("bob", trip).isEmpty)
            #expect(try peers["bob"].query("SELECT count(*) FROM receipt_due")[0].int64(0) == 0, "sealed and sent")
        }
    }
}

private func require<T>(_ value: T?, _ what: String = "value") throws -> T {
    guard let value else { throw RelayRigFailure("missing \(what)") }
    return value
}
