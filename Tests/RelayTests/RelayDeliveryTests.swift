import Foundation
import RelayTransport
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// sotto-relayd end to end with real processes: nats-server -js on loopback, the real
/// sotto-relayd, the real worker behind systemd-socket-activate on push.sock. Each test skips
/// (prints why) when nats-server is not installed.
@Suite("Relay delivery", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayDeliveryTests {
    @Test("offline catch-up: pushes queued while relayd is stopped arrive once each, in order; nothing left on the relay")
    func offlineCatchUp() throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        let count = 1_000
        var sent: [String] = []
        for index in 0..<count {
            let push = try rig.fixture.sealTextForRelay("queued \(index)")
            let ack = try rig.publish(push)
            #expect(!ack.duplicate)
            sent.append(push.messageId)
        }
        #expect(try rig.publisher().storedCount(rig.mailbox) == UInt64(count))
        #expect(try rig.storedMessageIds().isEmpty)

        try rig.startPushSocket(acceptYes: false)
        try rig.startRelayd()
        try waitUntil("\(count) messages stored", timeout: 300) { try rig.storedMessageIds().count >= count }
        #expect(try rig.storedMessageIds() == sent)
        try waitUntil("the mailbox is empty", timeout: 30) {
            let state = try rig.publisher().consumerState(rig.mailbox)
            return try rig.publisher().storedCount(rig.mailbox) == 0 && state?.pending == 0 && state?.ackPending == 0
        }
    }

    @Test("a message published while relayd runs is delivered at once (the mailbox watch wakes it)")
    func liveDelivery() throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        try rig.startPushSocket()
        try rig.startRelayd(arguments: ["--ack-wait-ms", "60000"])
        for index in 0..<5 {
            let push = try rig.fixture.sealTextForRelay("live \(index)")
            try rig.publish(push)
            // Well under the 5-minute safety sweep: only the watch can have woken relayd.
            try waitUntil("message \(index) stored", timeout: 20) { try rig.fixture.message(id: push.messageId) != nil }
        }
        // relayd acks on its ack thread after the worker's ack: the relay forgets the last one
        // a moment after it is stored.
        try waitUntil("the mailbox is empty", timeout: 10) { try rig.publisher().storedCount(rig.mailbox) == 0 }
    }

    @Test("kill -9 relayd at random points many times: every message stored exactly once")
    func killRelaydRepeatedly() throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        // Enough that batches of 256 (docs/adr/0027) are still flowing when most kills land.
        let count = 2_000
        var sent: [String] = []
        for index in 0..<count {
            let push = try rig.fixture.sealTextForRelay("crash \(index)")
            try rig.publish(push)
            sent.append(push.messageId)
        }
        try rig.startPushSocket(acceptYes: false)
        var generator = SystemRandomNumberGenerator()
        var midFlowKills = 0
        for _ in 0..<15 {
            try rig.startRelayd(arguments: ["--ack-wait-ms", "1000", "--retry-min-ms", "100"])
            usleep(UInt32.random(in: 2_000...60_000, using: &generator))  // the crash point, not a wait
            rig.killRelayd()
            if try rig.storedMessageIds().count < count { midFlowKills += 1 }
        }
        #expect(midFlowKills >= 5, "only \(midFlowKills) kills landed while messages were flowing")
        try rig.startRelayd(arguments: ["--ack-wait-ms", "1000", "--retry-min-ms", "100"])
        try waitUntil("every message stored", timeout: 120) { try rig.storedMessageIds().count >= count }
        let stored = try rig.storedMessageIds()
        #expect(stored.count == count)
        #expect(Set(stored) == Set(sent))
        try waitUntil("the mailbox is empty", timeout: 30) {
            let state = try rig.publisher().consumerState(rig.mailbox)
            return try rig.publisher().storedCount(rig.mailbox) == 0 && state?.pending == 0 && state?.ackPending == 0
        }
        print("RELAY kill-relayd: \(midFlowKills) kills mid-flow, \(count) messages stored once each")
    }

    @Test("SIGTERM mid catch-up: relayd finishes its batch, its acks reach the relay, it exits 0; a restart gets the rest once each")
    func sigtermSettlesAcks() throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        let count = 600  // three fetches: the stop comes between batches
        var sent: [String] = []
        for index in 0..<count {
            let push = try rig.fixture.sealTextForRelay("stop \(index)")
            _ = try rig.publish(push)
            sent.append(push.messageId)
        }
        try rig.startPushSocket(acceptYes: false)
        try rig.startRelayd()
        try waitUntil("a first batch stored", timeout: 120) { try !rig.storedMessageIds().isEmpty }
        let relayd = try #require(rig.relayd)
        relayd.signal(SIGTERM)
        // Without the graceful stop the process dies of the signal (143) and its unsent acks
        // leave messages pending on the relay for an ack wait.
        #expect(relayd.waitForExit() == 0, "\(relayd.output.suffix(5))")
        #expect(relayd.output.contains { $0.contains("stopped on SIGTERM: every stored message acked") },
                "\(relayd.output.suffix(5))")
        let stored = try rig.storedMessageIds().count
        let state = try #require(try rig.publisher().consumerState(rig.mailbox))
        #expect(state.ackPending == 0, "delivered but not acked at the stop: \(state)")
        #expect(try rig.publisher().storedCount(rig.mailbox) == UInt64(count - stored),
                "the relay holds exactly what the worker has not stored")

        rig.stopRelayd()
        try rig.startRelayd()
        try waitUntil("every message stored", timeout: 300) { try rig.storedMessageIds().count >= count }
        #expect(try rig.storedMessageIds() == sent)
        #expect(!rig.pushSocketLog.contains("push duplicate"), "a message came to the worker twice")
    }

    @Test("a push the worker rejects for good is terminated, not redelivered; the next one still arrives")
    func permanentRejection() throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        try rig.startPushSocket()
        try rig.startRelayd(arguments: ["--ack-wait-ms", "1000", "--retry-min-ms", "100"])
        let before = try rig.fixture.tableContents()
        let wrong = try rig.fixture.sealTextForRelay(
            "sealed for another conversation",
            sealedTopic: ProtocolIds.topic(conversationId: Hex.encode(SecureRandom.bytes(16))))
        try rig.publish(wrong)
        try waitUntil("the rejection is logged", timeout: 30) {
            rig.relaydOutput.contains { $0.contains("terminated") && $0.contains("decrypt_failed") }
        }
        #expect(try rig.fixture.tableContents() == before)
        let next = try rig.fixture.sealTextForRelay("after the bad one")
        try rig.publish(next)
        try waitUntil("the next message stored", timeout: 30) { try rig.fixture.message(id: next.messageId) != nil }
        try waitUntil("ack wait passed", timeout: 10) {
            guard let state = try rig.publisher().consumerState(rig.mailbox) else { return false }
            return state.ackPending == 0 && state.pending == 0
        }
        // Nothing left to redeliver: with work-queue retention the relay deletes a message once
        // it is acked or terminated, so a stream holding none cannot send one again.
        #expect(try rig.publisher().storedCount(rig.mailbox) == 0)
        #expect(rig.relaydOutput.filter { $0.contains("terminated") }.count == 1)
        #expect(!rig.relaydOutput.joined().contains(wrong.messageId))
    }

    @Test("a busy worker (database write-locked) gets a delayed redelivery, then the message is stored once")
    func busyWorker() throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        try rig.startPushSocket(extraEnvironment: ["SOTTO_BUSY_TIMEOUT_MS": "200"])
        try rig.startRelayd(arguments: ["--ack-wait-ms", "5000", "--retry-min-ms", "300", "--retry-max-ms", "1000"])
        let sqlite = try ChildProcess.launch("/usr/bin/sqlite3", [rig.fixture.group.databasePath])
        sqlite.write("PRAGMA busy_timeout=5000;\nBEGIN IMMEDIATE;\nSELECT 'locked';\n")
        #expect(sqlite.waitForLine(containing: "locked") != nil)
        let push = try rig.fixture.sealTextForRelay("while locked")
        try rig.publish(push)
        try waitUntil("two busy refusals", timeout: 30) {
            rig.relaydOutput.filter { $0.contains("not stored (busy)") && $0.contains("redelivery in") }.count >= 2
        }
        #expect(try rig.fixture.message(id: push.messageId) == nil)
        sqlite.write("ROLLBACK;\n.quit\n")
        #expect(sqlite.waitForExit() == 0)
        try waitUntil("stored after the lock", timeout: 30) { try rig.fixture.message(id: push.messageId) != nil }
        #expect(try rig.storedMessageIds() == [push.messageId])
        try waitUntil("the mailbox is empty", timeout: 10) { try rig.publisher().storedCount(rig.mailbox) == 0 }
    }

    @Test("garbage published into a mailbox is terminated and writes nothing")
    func garbage() throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        try rig.startPushSocket()
        try rig.startRelayd(arguments: ["--ack-wait-ms", "2000", "--retry-min-ms", "100"])
        let before = try rig.fixture.tableContents()
        var generator = SystemRandomNumberGenerator()
        var garbage: [[UInt8]] = [
            [], Array("not json".utf8), Array("{}".utf8), Array("{\"version\":1}\n{\"version\":1}".utf8),
            Array(repeating: 0x61, count: 5_000),
            Array(#"{"version":1,"clientId":"\#(rig.mailbox.clientId)","notificationData":{"envelope":"AQID"}}"#.utf8),
        ]
        for _ in 0..<20 {
            garbage.append((0..<Int.random(in: 1...800, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
        // Each as a hostile sender may put it on the relay: unpadded (a bad frame), and padded
        // when it fits a frame (a good frame around a bad push; docs/protocol/relay-padding.md).
        var published = 0
        for (index, bytes) in garbage.enumerated() {
            _ = try rig.publisher().publish(bytes, to: rig.mailbox, messageId: "garbage-\(index)", padded: false)
            published += 1
            if (1...RelayPadding.maxPushBytes).contains(bytes.count) {
                _ = try rig.publisher().publish(bytes, to: rig.mailbox, messageId: "padded-garbage-\(index)")
                published += 1
            }
        }
        try waitUntil("every garbage message terminated", timeout: 120) {
            rig.relaydOutput.filter { $0.contains("terminated") }.count >= published
        }
        try waitUntil("the mailbox is empty", timeout: 10) { try rig.publisher().storedCount(rig.mailbox) == 0 }
        #expect(try rig.fixture.tableContents() == before)
        #expect(rig.relayd?.isRunning == true)
    }

    @Test("relay down at start: relayd waits and retries, then delivers once it is up")
    func relayDownAtStart() throws {
        guard let rig = try RelayRig.make(startServer: false) else { return }
        defer { rig.tearDown() }
        try rig.startPushSocket()
        try rig.startRelayd(waitForMailbox: false)
        #expect(rig.relayd?.waitForLine(containing: "not reachable", timeout: 30) == true)
        #expect(rig.relayd?.isRunning == true)
        try rig.server.restart()
        let push = try rig.fixture.sealTextForRelay("after the relay came up")
        try rig.publish(push)
        try waitUntil("stored", timeout: 60) { try rig.fixture.message(id: push.messageId) != nil }
        #expect(rig.relaydOutput.contains { $0.contains("relay connected") && $0.contains("failed attempts") })
    }

    @Test("kill -9 and restart the relay server mid-flow: nothing acked to a publisher is lost")
    func relayServerCrash() throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        try rig.startPushSocket(acceptYes: false)
        try rig.startRelayd(arguments: ["--ack-wait-ms", "2000", "--retry-min-ms", "100"])
        let count = 200
        var acked: [String] = []
        for index in 0..<count {
            if index == count / 3 || index == 2 * count / 3 {
                rig.server.kill9()
                try rig.server.restart()
            }
            let push = try rig.fixture.sealTextForRelay("through a crash \(index)")
            // A sender's outbox: retry the same message (same Nats-Msg-Id) until the relay acks.
            try waitUntil("publish \(index) acked", timeout: 60) { (try? rig.publish(push)) != nil }
            acked.append(push.messageId)
        }
        try waitUntil("every acked message stored", timeout: 180) { Set(try rig.storedMessageIds()).isSuperset(of: acked) }
        let stored = try rig.storedMessageIds()
        #expect(stored.count == count)
        #expect(Set(stored) == Set(acked))
        #expect(rig.relaydOutput.contains { $0.contains("relay reconnected") })
    }
}

/// A relay that comes back empty (its store lost, or the stream and consumers deleted by its
/// operator) is set up again by sotto-relayd: stream, consumer, delivery.
@Suite("Relay wiped", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayWipedTests {
    @Test("the relay restarts with an empty store: relayd recreates the stream and its consumer and delivers again")
    func wipedRelay() throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        try rig.startPushSocket()
        try rig.startRelayd(arguments: ["--ack-wait-ms", "2000", "--retry-min-ms", "100"])
        let first = try rig.fixture.sealTextForRelay("before the wipe")
        try rig.publish(first)
        try waitUntil("first stored", timeout: 30) { try rig.fixture.message(id: first.messageId) != nil }

        rig.server.kill9()
        try FileManager.default.removeItem(atPath: rig.server.storeDirectory)
        try rig.server.restart()
        try waitUntil("the consumer recreated", timeout: 60) { try rig.publisher().consumerState(rig.mailbox) != nil }
        let second = try rig.fixture.sealTextForRelay("after the wipe")
        try rig.publish(second)
        try waitUntil("second stored", timeout: 30) { try rig.fixture.message(id: second.messageId) != nil }
    }
}
