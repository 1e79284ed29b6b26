import Foundation
import SottoCrypto
import SottoWire
import Synchronization
import RelayTransport
import SharedStore
import Testing
import TestSupport

/// Issue #21: relayd catching up in batches (docs/adr/0027) while the device's power goes.
/// The device's group directory lies on the power-cut file system (docs/adr/0037); the
/// relay's own store does not. Whatever relayd acked to the relay (and the relay deleted) must
/// be on the device's disk after the cut; the rest must still be on the relay.
@Suite("Relay power cut", .serialized,
       .enabled(if: NatsServer.isInstalled && PowerCutFileSystem.isAvailable, "needs nats-server, root, /dev/fuse and fusermount3"))
struct RelayPowerCutTests {
    @Test("600 queued pushes, the power cut after 150 are stored: the disk keeps an in-order prefix, and after the restart all 600 are stored once, in order, the mailbox empty",
          arguments: [PowerCutFileSystem.Cut.all, .torn(seed: 5)])
    func catchUpSurvivesPowerCut(cut: PowerCutFileSystem.Cut) async throws {
        // Minutes of blocking steps: on a thread of their own, not the test pool's (async tests starve).
        try await onOwnThread { try self.catchUpSurvivesPowerCutSteps(cut: cut) }
    }

    private func catchUpSurvivesPowerCutSteps(cut: PowerCutFileSystem.Cut) throws {
        let tmp = try TemporaryDirectory(prefix: "sotto-relay-power")
        let disk = try PowerCutFileSystem.mount(in: tmp.path)
        defer { disk.abandon() }
        guard let rig = try RelayRig.make(groupIn: disk.mountpoint) else { return }
        defer { rig.tearDown() }
        try disk.syncEverything()  // the device was set up long ago
        let sent = try (0..<600).map { index in
            let push = try rig.fixture.sealTextForRelay("powered \(index)")
            try rig.publish(push)
            return push.messageId
        }
        try rig.startPushSocket(acceptYes: true)
        try rig.startRelayd()
        try waitWhileProgressing("150 messages stored", target: 150, stall: 60) { try rig.storedMessageIds().count }

        let summary = try disk.powerCycle(cut) {
            rig.killRelayd()
            rig.stopPushSocket()
        }
        let kept = try rig.storedMessageIds()
        print("RELAY power cut (\(cut)): \(summary); the disk kept \(kept.count) of \(sent.count)")
        #expect(kept.count >= 150, "an ok-acked batch was lost")
        #expect(kept == Array(sent.prefix(kept.count)), "the disk kept something other than an in-order prefix")
        #expect(try rig.fixture.open().query("PRAGMA integrity_check")[0].string(0) == "ok")

        // The relay redelivers what relayd had not acked before the cut.
        try rig.startPushSocket(acceptYes: true)
        try rig.startRelayd()
        try waitWhileProgressing("600 messages stored", target: sent.count, stall: 60) { try rig.storedMessageIds().count }
        let stored = try rig.storedMessageIds()
        let firstDifference = zip(stored, sent).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(stored == sent, "first difference at \(String(describing: firstDifference)); relayd: \(rig.relaydOutput.suffix(12))")
        try waitUntil("the mailbox is empty", timeout: 30) {
            let state = try rig.publisher().consumerState(rig.mailbox)
            return try rig.publisher().storedCount(rig.mailbox) == 0 && state?.pending == 0 && state?.ackPending == 0
        }
        rig.killRelayd()
        rig.stopPushSocket()
    }
}

/// Issue #21: the power cut while alice's daemon publishes to the relay. Alice's group
/// directory lies on the power-cut file system; the relay's store and bob do not. A burst of
/// sends (the control socket's `sendMessage`) runs while her daemon publishes and her relayd takes bob's receipts; the cut
/// comes with a SIGKILL of her daemon, her relayd and her workers. Whatever her outbox forgot
/// (a push published but its `relayed` not yet durable) goes out again and is answered as a
/// duplicate, by the relay's de-duplication or bob's worker.
@Suite("Relay power cut while publishing", .serialized,
       .enabled(if: NatsServer.isInstalled && PowerCutFileSystem.isAvailable, "needs nats-server, root, /dev/fuse and fusermount3"))
struct RelayPublishPowerCutTests {
    static let sends = 24

    @Test("a burst of sends through the relay, the power cut mid-publish: every send the daemon reported is on alice's disk once, reaches bob once, and ends delivered",
          arguments: [PowerCutFileSystem.Cut.all, .torn(seed: 11)])
    func publishSurvivesPowerCut(cut: PowerCutFileSystem.Cut) async throws {
        try await onOwnThread { try self.publishSurvivesPowerCutSteps(cut: cut) }
    }

    private func publishSurvivesPowerCutSteps(cut: PowerCutFileSystem.Cut) throws {
        let tmp = try TemporaryDirectory(prefix: "sotto-relay-publish-power")
        let disk = try PowerCutFileSystem.mount(in: tmp.path)
        defer { disk.abandon() }
        let server = try NatsServer.start(storeDirectory: tmp.path + "/jetstream")
        defer { server.stop() }
        let relay = ["SOTTO_RELAY": server.url]
        let alice = try Device.start("alice", in: tmp.path, environment: relay, groupIn: disk.mountpoint)
        defer { alice.stop() }
        let bob = try Device.start("bob", in: tmp.path, environment: relay)
        defer { bob.stop() }
        let (aliceRelayd, bobRelayd) = (RelaydRuns(), RelaydRuns())
        let startRelayd = { (runs: RelaydRuns, device: Device) throws in
            let process = try runs.launch(["--ack-wait-ms", "3000", "--retry-min-ms", "200"],
                                          environment: device.environment.merging(relay.merging(["PATH": "/usr/bin:/bin"]) { $1 }) { $1 })
            guard process.waitForLine(containing: "relay connected", timeout: 30) else {
                throw RelayRigFailure("\(device.name)'s sotto-relayd did not connect: \(process.output.suffix(8))")
            }
        }
        defer { aliceRelayd.stop(); bobRelayd.stop() }
        try startRelayd(aliceRelayd, alice)
        try startRelayd(bobRelayd, bob)
        try disk.syncEverything()  // the device was set up long ago

        let trip = try #require(try alice.json(["new", "--name", "Cut"])["conversationId"] as? String)
        let code = try #require(try alice.json(["invite", trip, "--expires", "1h"])["code"] as? String)
        _ = try bob.json(["join", code, "--profile-name", "bob"])
        try bob.waitUntil("bob active", timeoutMs: 60_000) { try bob.conversation(trip)?["state"] as? String == "active" }
        try alice.waitUntil("alice lists bob", timeoutMs: 60_000) { try alice.conversation(trip)?["members"] as? Int == 2 }

        // The burst runs on its own thread; the cut lands while alice's daemon publishes it. It
        // calls the control socket's sendMessage itself (what `sotto send` does) rather than
        // spawning CLIs while this thread restarts processes.
        let marker = "cut-" + Hex.encode(SecureRandom.bytes(4))
        let reported = Mutex<[String]>([])
        let finished = Mutex(false)
        let controlSocket = alice.runtime.controlSocketPath
        let burst = Thread {
            for index in 0..<Self.sends {
                // While the daemon is down the socket refuses: the sender tries again until it
                // is back (a user retrying); an answer, ok or not, ends this message's turn.
                let giveUpAt = Date().addingTimeInterval(60)
                while Date() < giveUpAt {
                    guard let client = try? ControlSocketClient(path: controlSocket, timeoutSeconds: 20) else {
                        usleep(20_000)  // polling for the daemon's return, like waitUntil
                        continue
                    }
                    if let sent = try? client.result("sendMessage", ["conversation": trip, "text": "\(marker) \(index)"]),
                       let id = sent["messageId"] as? String {
                        reported.withLock { $0.append(id) }
                    }
                    break
                }
            }
            finished.withLock { $0 = true }
        }
        burst.start()
        try alice.waitUntil("alice's daemon is publishing the burst", timeoutMs: 60_000) {
            try alice.query("SELECT count(*) FROM outbox WHERE state <> 'pending'")[0].int64(0) >= 4
        }
        let summary = try disk.powerCycle(cut) {
            aliceRelayd.stop(SIGKILL)
            alice.stopPushSocket()
            alice.stopDaemon(signal: SIGKILL)
        }
        try alice.startPushSocket()
        try alice.startDaemon()
        try startRelayd(aliceRelayd, alice)
        do {
            try alice.waitUntil("the burst is over", timeoutMs: 120_000) { finished.withLock { $0 } }
        } catch {
            Issue.record("\(reported.withLock { $0.count }) sends reported; alice's daemon: \(alice.daemonLog.suffix(4_000))")
            throw error
        }

        let ids = reported.withLock { $0 }
        print("RELAY publish power cut (\(cut)): \(summary); \(ids.count) of \(Self.sends) sends reported")
        #expect(ids.count >= 4)
        for id in ids {
            #expect(try alice.query("SELECT count(*) FROM message WHERE id = ?", [.text(id)])[0].int64(0) == 1,
                    "send \(id) was reported and is not on alice's disk once")
        }
        let marked = { (device: Device) throws -> [String] in
            try device.storedTexts(conversation: trip).filter { $0.text.hasPrefix(marker + " ") }.map(\.id)
        }
        let onAlice = Set(try marked(alice))
        #expect(onAlice.isSuperset(of: ids))
        try bob.waitUntil("bob has every text alice holds", timeoutMs: 120_000) {
            Set(try marked(bob)).isSuperset(of: onAlice)
        }
        let onBob = try marked(bob)
        #expect(onBob.count == Set(onBob).count, "a text reached bob twice")
        #expect(Set(onBob) == onAlice, "bob holds a text alice does not")
        try alice.waitUntil("alice's outbox ends delivered", timeoutMs: 120_000) {
            try alice.query("SELECT count(*) FROM outbox WHERE state <> 'delivered'")[0].int64(0) == 0
        }
        #expect(try alice.query("PRAGMA integrity_check")[0].string(0) == "ok")
    }
}
