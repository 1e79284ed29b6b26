import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import Testing
import TestSupport

extension StressSuite.DurabilityMutationTests {
    /// Rules 3 (a deletion) and 4 (the tombstone ordering) of docs/adr/0058: `sotto explode` of
    /// a conversation with no member deletes it at once (rows and tombstone in one commit, the
    /// identity and alias wiped, the tombstone deleted) before the CLI hears "done"; then the
    /// power goes. After it the conversation must be gone from the database and the keystore,
    /// and the identity file's sealed bytes on no file of the disk, named or freed. Each
    /// mutation breaks exactly one of those:
    ///
    /// ```
    /// keystore-wipe              → the sealed identity is in the disk's freed inodes
    /// keystore-unlink-directory  → <clientId>.identity and the alias are back (zeroed)
    /// wal-commit                 → the rows are back, their identity is not (half)
    /// keystore-wipe + -unlink-…  → the exploded identity opens again
    /// ```
    @Test("rules 3 and 4: after an explode and a power cut the conversation is gone and its identity's bytes are nowhere on the disk; without the wipe's fsync, the deletion's directory fsync or the WAL fsync, each check fails",
          arguments: [[], [SyncMutation.keystoreWipe], [.keystoreUnlinkDirectory], [.walCommit], [.keystoreWipe, .keystoreUnlinkDirectory]])
    func explodeSyncsAreNecessary(mutations: [SyncMutation]) async throws {
        let outcome = try await onDedicatedThread { try ExplodeAfterCut.run(mutations: mutations) }
        let label = mutations.isEmpty ? "none" : mutations.map(\.rawValue).joined(separator: ",")
        print("DURABILITY explode (mutant: \(label)): \(outcome)")
        switch Set(mutations) {
        case []:
            #expect(outcome.state == "gone", "\(outcome)")
            #expect(outcome.bytesFoundIn.isEmpty, "\(outcome)")
            #expect(!outcome.identityOpens)
        case [.keystoreWipe]:
            #expect(outcome.bytesFoundIn.contains { $0.hasPrefix("freed/") },
                    "the check did not find the sealed identity in the freed inodes without the wipe's fsync: \(outcome)")
        case [.keystoreUnlinkDirectory]:
            #expect(outcome.state.contains("identity=true"),
                    "the check did not see the identity file come back without the deletion's directory fsync: \(outcome)")
        case [.walCommit]:
            #expect(outcome.state.contains("inbox=1") && outcome.state.contains("identity=false"),
                    "the check did not see the rows come back without their identity: \(outcome)")
        default:
            #expect(outcome.identityOpens, "the exploded identity did not come back whole: \(outcome)")
        }
    }
}

/// One explode then a power cut (`all`) on the test file system, and what the disk holds of
/// the exploded conversation afterwards.
///
/// ```swift
/// let outcome = try ExplodeAfterCut.run(mutations: [.keystoreWipe])
/// outcome.state           // "gone", or ExplodeHolding's "partial(inbox=… identity=…)"
/// outcome.bytesFoundIn    // ["freed/1234-…"]: files (under disk/ or freed/) holding the sealed identity
/// ```
struct ExplodeAfterCut: CustomStringConvertible {
    var state = ""
    var bytesFoundIn: [String] = []
    var identityOpens = false
    var cut = ""

    var description: String {
        "state=\(state) bytes in \(bytesFoundIn.isEmpty ? "none" : bytesFoundIn.joined(separator: " ")) "
            + "identity opens=\(identityOpens) cut: \(cut)"
    }

    static func run(mutations: [SyncMutation]) throws -> ExplodeAfterCut {
        let tmp = try TemporaryDirectory(prefix: "sotto-mutant-explode")
        let disk = try PowerCutFileSystem.mount(in: tmp.path, keepFreed: true)
        defer { disk.abandon() }
        let environment = mutations.isEmpty ? [:] : [SyncMutation.variable: mutations.map(\.rawValue).joined(separator: ",")]
        let alice = try Device.start("alice", in: tmp.path, environment: environment, groupIn: disk.mountpoint)
        defer { alice.stop() }
        guard let trip = try alice.json(["new", "--name", "Boom"])["conversationId"] as? String else {
            throw StressFailure("new returned no id")
        }
        let holding = try ExplodeHolding(device: alice, conversationId: trip)
        let keystore = alice.group.keystorePath
        guard let sealed = FileManager.default.contents(atPath: "\(keystore)/\(holding.clientId).identity") else {
            throw StressFailure("no identity file for the new conversation")
        }
        try disk.syncEverything()  // the conversation was made long ago

        let exploded = try alice.cli(["explode", trip, "--json"])
        guard exploded.status == 0 else { throw StressFailure("explode: \(exploded.stderr)") }
        guard try holding.state() == .gone else { throw StressFailure("explode answered before the deletion: \(try holding.state())") }

        var outcome = ExplodeAfterCut()
        outcome.cut = try disk.powerCycle(.all) {
            alice.stopPushSocket()
            alice.stopDaemon(signal: SIGKILL)
        }
        outcome.state = "\(try holding.state())"
        outcome.bytesFoundIn = FileSearch.files(containing: Array(sealed), under: disk.backing).map { "disk/" + $0 }
            + FileSearch.files(containing: Array(sealed), under: disk.freed).map { "freed/" + $0 }
        let keys = try Keystore(directory: keystore, environment: [:])
        outcome.identityOpens = (try? keys.identity(clientId: holding.clientId)) != nil
        return outcome
    }
}
