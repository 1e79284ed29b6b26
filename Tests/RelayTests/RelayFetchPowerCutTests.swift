import Foundation
import RelayTransport
import SottoCrypto
import SottoWire
import Testing
import TestSupport

/// Issue #35: bob's daemon fetching a file from the relay (docs/adr/0078) when the power goes,
/// at a named step: in the middle of the pieces (`attachment.piece@20`), or with the file whole
/// under its final name and not yet recorded (`attachment.fetched`). Bob's group directory lies
/// on the power-cut file system (docs/adr/0037); the relay's store and alice do not. After the
/// cut no file is under its final name unless it is whole, and after the restart the file is
/// there once, byte for byte. The SIGKILL versions: RelayReceivingAttachmentTests.
@Suite("Relay fetch power cut", .serialized,
       .enabled(if: NatsServer.isInstalled && PowerCutFileSystem.isAvailable, "needs nats-server, root, /dev/fuse and fusermount3"))
struct RelayFetchPowerCutTests {
    static let steps = ["attachment.piece@20", "attachment.fetched"]
    static let rounds = PowerCutRound.plan(steps: steps, tornAt: steps[0], seed: 35)

    /// Alice and bob in one conversation through a real relay, bob's group directory on the
    /// power-cut file system; `body` runs under `peers.diagnosed`. Nothing when nats-server is missing.
    static func withBobOnPowerCutDisk(prefix: String, _ body: (PowerCutFileSystem, RelayPeers, String) throws -> Void) throws {
        let diskDirectory = try TemporaryDirectory(prefix: prefix)
        defer { diskDirectory.remove() }
        let disk = try PowerCutFileSystem.mount(in: diskDirectory.path)
        defer { disk.abandon() }
        guard let peers = try RelayPeers.make(["alice", "bob"], groupIn: ["bob": disk.mountpoint]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed { try body(disk, peers, try peers.conversation(creator: "alice", joiner: "bob")) }
    }

    @Test("Killed at the step, the power cut with it, restarted: nothing under the file's final name but the whole file, and after the restart the file whole and once, available",
          arguments: rounds)
    func fetchSurvivesPowerCut(_ round: PowerCutRound<String>) async throws {
        // Blocking steps: on a thread of their own, not the test pool's (async tests starve).
        try await onOwnThread { try self.fetchSurvivesPowerCutSteps(round.step, round.cut) }
    }

    private func fetchSurvivesPowerCutSteps(_ crashAt: String, _ cut: PowerCutFileSystem.Cut) throws {
        try Self.withBobOnPowerCutDisk(prefix: "sotto-fetch-power") { disk, peers, trip in
            let (alice, bob) = (peers["alice"], peers["bob"])
            bob.stopDaemon()
            try disk.syncEverything()  // the device was set up long ago
            try bob.startDaemon(environment: [CrashPoint.variable: crashAt])

            let path = peers.tmp.path + "/album.zip"
            try Data((0..<3_000_000).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: path))
            let id = try #require(try alice.json(["send", trip, "--file", path])["messageId"] as? String)
            let original = try #require(FileManager.default.contents(atPath: alice.group.attachmentsPath(conversationId: trip) + "/" + id))
            #expect(try bob.diedAtCrashPoint(crashAt, timeoutMs: 60_000), "\(crashAt) never reached")
            let summary = try disk.powerCycle(cut) {
                peers.stopRelayd("bob", signal: SIGKILL)
                bob.stopDaemon(signal: SIGKILL)
                bob.stopPushSocket()
            }
            let final = bob.group.attachmentsPath(conversationId: trip) + "/" + id
            let kept = FileManager.default.contents(atPath: final)
            #expect(kept == nil || kept == original, "after the cut the final name holds \(kept?.count ?? 0) bytes that are not the file")
            if crashAt == "attachment.fetched" {
                // Renamed and its directory fsynced before the step (and the directory's own entry when it was made).
                #expect(kept == original, "the whole file, made durable before the step, was lost with the power")
            }
            print("FETCH power cut at \(crashAt) (cut \(cut)): \(summary); the final name \(kept == nil ? "absent" : "whole")")

            try bob.startPushSocket()
            try bob.startDaemon()
            try peers.startRelayd("bob")
            try bob.waitUntil("bob's copy is available after the restart", timeoutMs: 90_000) {
                (peers.message("bob", trip, id: id)?["attachment"] as? [String: Any])?["state"] as? String == "available"
            }
            #expect(FileManager.default.contents(atPath: final) == original, "the file, byte for byte")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: bob.group.attachmentsPath(conversationId: trip))) ?? []
            #expect(names == [id], "once, and no partial file: \(names)")
            #expect(try bob.query("PRAGMA integrity_check")[0].string(0) == "ok")
        }
    }

    @Test("The disk fills up in the middle of a fetch: the daemon says why and tries again, nothing is under the final name meanwhile, and once there is room the fetch goes on and ends with the file whole")
    func fullDiskMidFetch() async throws {
        try await onOwnThread { try self.fullDiskMidFetchSteps() }
    }

    private func fullDiskMidFetchSteps() throws {
        try Self.withBobOnPowerCutDisk(prefix: "sotto-fetch-full") { disk, peers, trip in
            let (alice, bob) = (peers["alice"], peers["bob"])
            let path = peers.tmp.path + "/film.mp4"
            try Data((0..<20_000_000).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: path))
            let id = try #require(try alice.json(["send", trip, "--file", path])["messageId"] as? String)
            let original = try #require(FileManager.default.contents(atPath: alice.group.attachmentsPath(conversationId: trip) + "/" + id))
            let partial = bob.group.attachmentsPath(conversationId: trip) + "/.\(id).partial"
            try bob.waitUntil("bob's fetch has begun", timeoutMs: 60_000) {
                ((try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int) ?? 0) > 0
            }
            // From now on every write finds the disk full (the database's too), until room is made.
            try disk.fail(.write, first: 1, error: "ENOSPC", count: 0)
            try bob.waitUntil("bob's daemon says the disk is full", timeoutMs: 60_000) {
                bob.daemonLog.contains("No space left on device") && bob.daemonLog.contains("trying again")
            }
            let final = bob.group.attachmentsPath(conversationId: trip) + "/" + id
            #expect(!FileManager.default.fileExists(atPath: final), "nothing under the final name while the disk is full")
            try disk.clearFaults()
            try bob.waitUntil("bob's copy is available once there is room", timeoutMs: 90_000) {
                (peers.message("bob", trip, id: id)?["attachment"] as? [String: Any])?["state"] as? String == "available"
            }
            #expect(FileManager.default.contents(atPath: final) == original, "the file, byte for byte")
            #expect(try bob.query("PRAGMA integrity_check")[0].string(0) == "ok")
        }
    }
}
