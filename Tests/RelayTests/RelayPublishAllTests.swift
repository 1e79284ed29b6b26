import Foundation
import RelayTransport
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// `RelayConnection.publishAll` (docs/adr/0041): a fan-out's pushes published a window at a
/// time against a real nats-server, each push's outcome its own ack.
@Suite("Relay: publishing a window of pushes", .serialized,
       .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayPublishAllTests {
    static func pushes(_ count: Int, size: Int = 1_400) throws -> [BatchPush] {
        try (0..<count).map { _ in
            let payload = SecureRandom.bytes(size)
            return BatchPush(payload: payload, mailbox: try Mailbox(clientId: UUID().uuidString.lowercased()),
                             messageId: Hex.encode(SHA256.hash(payload)))
        }
    }

    @Test("1,000 pushes with a window of 64: all acked in order, one message per mailbox; published again, all duplicates and nothing stored twice")
    func windowAndDuplicates() throws {
        let tmp = try TemporaryDirectory(prefix: "pall")
        defer { tmp.remove() }
        let server = try NatsServer.start(storeDirectory: tmp.path + "/js")
        defer { server.stop() }
        let relay = try RelayConnection.testPublisher(server.url)
        defer { relay.close() }
        try relay.ensureStream()

        let pushes = try Self.pushes(1_000)
        let first = relay.publishAll(pushes, window: 64)
        let acks = try first.map { try $0.get() }
        #expect(acks.allSatisfy { !$0.duplicate })
        #expect(Set(acks.map(\.sequence)).count == 1_000)
        let counts = try relay.storedCountsByMailbox()
        #expect(counts.count == 1_000 && counts.values.allSatisfy { $0 == 1 })

        let again = relay.publishAll(pushes)
        #expect(try again.map { try $0.get().duplicate }.allSatisfy { $0 })
        #expect(try relay.storedCount() == 1_000)
        #expect(relay.publishAll([]).isEmpty)
    }

    @Test("hostile and failing input: a push over the stream's size limit is refused alone, the others stored; a relay that stops answering or is gone gives every push an error, within the wait")
    func refusedAndGone() throws {
        let tmp = try TemporaryDirectory(prefix: "pall")
        defer { tmp.remove() }
        let server = try NatsServer.start(storeDirectory: tmp.path + "/js")
        defer { server.stop() }
        var options = RelayConnection.Options()
        options.apiWaitMs = 1_000
        let relay = try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(server.url)), options: options)
        defer { relay.close() }
        try relay.ensureStream()

        var pushes = try Self.pushes(3)
        pushes.insert(try Self.pushes(1, size: Int(MailboxStream.maxMessageBytes) + 1)[0], at: 1)
        let results = relay.publishAll(pushes)
        #expect(results.count == 4)
        #expect(results.enumerated().allSatisfy { index, result in
            if case .success = result { return index != 1 } else { return index == 1 }
        })
        #expect(try relay.storedCount() == 3)

        // A relay that stops answering mid-batch (SIGSTOP): the window fills, the rest is
        // refused, the unacked are taken back after the wait; acks that come after that
        // (SIGCONT) reach nothing, and the connection keeps working.
        let pid = try #require(server.pid)
        kill(pid, SIGSTOP)
        let stalled = Date()
        let unanswered = relay.publishAll(try Self.pushes(300), window: 64)
        kill(pid, SIGCONT)
        #expect(unanswered.count == 300)
        #expect(unanswered.allSatisfy { if case .failure = $0 { true } else { false } })
        #expect(Date().timeIntervalSince(stalled) < 10)
        #expect(relay.publishAll(try Self.pushes(2)).allSatisfy { if case .success = $0 { true } else { false } })

        server.kill9()
        let started = Date()
        let gone = relay.publishAll(try Self.pushes(300), window: 64)
        #expect(gone.count == 300)
        #expect(gone.allSatisfy { if case .failure = $0 { true } else { false } })
        #expect(Date().timeIntervalSince(started) < 10)
    }
}
