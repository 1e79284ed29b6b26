import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import Testing
import TestSupport

extension StressSuite {
/// Issue #21: each fsync rule of docs/durability.md has a check that fails when the fsync it
/// names is removed (`SyncMutation`, debug builds only). The same checks pass with every
/// fsync in place (`PowerCutTests`, and the `nil` case below), so they decide something.
@Suite("Stress: durability rules, each shown necessary", .serialized,
       .enabled(if: PowerCutFileSystem.isAvailable, "needs root, /dev/fuse and fusermount3"))
struct DurabilityMutationTests {
    @Test("rule 1: without the WAL fsync at commit (synchronous = OFF), a power cut loses pushes the worker acked ok, and the storm's check says so")
    func walCommitIsNecessary() async throws {
        var mutant = PowerCutStorm(rounds: 1, pushesPerRound: 60)   // round 0 cuts all unsynced writes
        mutant.mutation = .walCommit
        let storm = mutant
        let report = try await onDedicatedThread { try storm.run() }
        print(report.summaryLine + " (mutant: \(SyncMutation.walCommit.rawValue))")
        #expect(report.okBeforeCut > 0)
        #expect(!report.ackedLost.isEmpty, "the storm's check did not see acked pushes lost without the WAL fsync")
    }

    /// The daemon makes identities (`sotto new` claims the unused identity and makes the next
    /// one: keystore files written and named), then the power goes. Every inbox the database
    /// kept must open from the keystore.
    @Test("rule 3: every identity the database names opens after a power cut; without the keystore file's or directory's fsync some do not",
          arguments: [nil, SyncMutation.keystoreFile, .keystoreDirectory])
    func keystoreSyncsAreNecessary(mutation: SyncMutation?) async throws {
        try await onDedicatedThread { try self.keystoreSteps(mutation: mutation) }
    }

    private func keystoreSteps(mutation: SyncMutation?) throws {
        let tmp = try TemporaryDirectory(prefix: "sotto-mutant")
        let disk = try PowerCutFileSystem.mount(in: tmp.path)
        defer { disk.abandon() }
        let environment = mutation.map { [SyncMutation.variable: $0.rawValue] } ?? [:]
        let alice = try Device.start("alice", in: tmp.path, environment: environment, groupIn: disk.mountpoint)
        defer { alice.stop() }
        let inboxes = { try alice.query("SELECT clientId FROM inbox").map { try $0.string(0) } }
        try disk.syncEverything()  // the device was set up long ago
        let before = try inboxes().count
        for name in ["one", "two"] { _ = try alice.json(["new", "--name", name]) }
        try alice.waitUntil("two more identities made") { try inboxes().count >= before + 2 }

        _ = try disk.powerCycle(.all) {
            alice.stopPushSocket()
            alice.stopDaemon(signal: SIGKILL)
        }
        let kept = try inboxes()
        #expect(kept.count >= before + 2, "the database's commits are fsynced: its rows survive")
        let keystore = try Keystore(directory: alice.group.keystorePath, environment: [:])
        var unopenable: [String] = []
        for clientId in kept {
            do { _ = try keystore.identity(clientId: clientId) } catch { unopenable.append("\(clientId.prefix(8)): \(error)") }
        }
        print("DURABILITY keystore (mutant: \(mutation?.rawValue ?? "none")): \(kept.count) inboxes, \(unopenable.count) do not open")
        if mutation == nil {
            #expect(unopenable.isEmpty, "\(unopenable)")
        } else {
            #expect(!unopenable.isEmpty, "the check did not see identities lost without the \(mutation!.rawValue) fsync")
        }
    }

    /// A worker meets damage in its own write and marks the file (`shared.sqlite.damaged`),
    /// then the power goes. The damage is on the disk, so the marker must be too: without it
    /// the next workers ack into the damaged file while a daemon's quick check runs out of
    /// its budget (docs/adr/0018).
    @Test("rule 12: the damage marker a worker wrote is on the disk after a power cut; without the directory fsync after its link it is not",
          arguments: [nil, SyncMutation.damageMarkerDirectory])
    func damageMarkerSyncIsNecessary(mutation: SyncMutation?) async throws {
        try await onDedicatedThread { try self.damageMarkerSteps(mutation: mutation) }
    }

    private func damageMarkerSteps(mutation: SyncMutation?) throws {
        let tmp = try TemporaryDirectory(prefix: "sotto-mutant-damage")
        let disk = try PowerCutFileSystem.mount(in: tmp.path)
        defer { disk.abandon() }
        let environment = mutation.map { [SyncMutation.variable: $0.rawValue] } ?? [:]
        let alice = try Device.start("alice", in: tmp.path, environment: environment, groupIn: disk.mountpoint)
        defer { alice.stop() }
        let conversation = try #require(try alice.json(["new", "--name", "Damaged"])["conversationId"] as? String)
        let member = try RemoteMember.join(conversationId: conversation, databasePath: alice.group.databasePath)
        alice.stopDaemon()
        let database = alice.group.databasePath
        try PageCorruption.overwrite(page: try PageCorruption.rootPage(of: "message", databasePath: database), databasePath: database)
        try disk.syncEverything()  // the damage is on the disk

        let ack = try PushClient.send(try member.push("into the damage"), to: alice.runtime.pushSocketPath)
        #expect(PushAck.parse(Array(ack.utf8)).map { if case .error = $0 { true } else { false } } == true, "\(ack)")
        let marker = DamageMarker(databasePath: alice.group.databasePath)
        #expect(marker.isPresent, "the worker did not mark the damage it met")
        _ = try disk.powerCycle(.all) { alice.stopPushSocket() }
        print("DURABILITY damage marker (mutant: \(mutation?.rawValue ?? "none")): present after the cut: \(marker.isPresent)")
        if mutation == nil {
            #expect(marker.isPresent, "the damage marker was lost by the power cut")
        } else {
            #expect(!marker.isPresent, "the check did not see the marker lost without the \(mutation!.rawValue) fsync")
        }
    }
}
}
