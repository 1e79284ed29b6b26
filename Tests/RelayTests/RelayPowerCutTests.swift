import Foundation
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
        try waitUntil("150 messages stored", timeout: 120) { try rig.storedMessageIds().count >= 150 }

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
        try waitUntil("600 messages stored", timeout: 120) { try rig.storedMessageIds().count >= sent.count }
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
