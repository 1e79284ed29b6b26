import Foundation
import RelayTransport
import SottoWire
import Testing
import TestSupport

/// Issue #21, docs/adr/0058: sotto-relayd's own files survive a power cut once it has used
/// them. Its first look at the keystore makes the identity's relay key
/// (`relayd-users/<clientId>.nk`, which names the consumer it then makes on the relay) and the
/// mailbox record (`relayd-mailboxes`, which lets a restarted relayd finish a retirement).
/// The group directory lies on the power-cut file system; the power goes once the consumer
/// exists. Each fsync of the two files is shown necessary: with it removed
/// (`SyncMutation`, debug builds) the check below fails.
///
/// ```
/// relay-key-file             → the key file is there, empty: refused, the consumer orphaned
/// relay-key-directory        → the key file is gone
/// relay-key-parent (+ mailbox-record-directory, which also syncs the group directory)
///                            → relayd-users itself is gone, and every key in it
/// mailbox-record-file        → the record is there, empty: refused
/// mailbox-record-directory   → the record is gone (the key stays: relay-key-parent)
/// ```
@Suite("Relayd files after a power cut", .serialized,
       .enabled(if: NatsServer.isInstalled && PowerCutFileSystem.isAvailable, "needs nats-server, root, /dev/fuse and fusermount3"))
struct RelaydFilesPowerCutTests {
    @Test("relayd's key and mailbox record are on the disk after a power cut; without each of their fsyncs one is not",
          arguments: [[], [SyncMutation.relayKeyFile], [.relayKeyDirectory], [.relayKeyParent, .mailboxRecordDirectory],
                      [.mailboxRecordFile], [.mailboxRecordDirectory]])
    func relaydFilesSurvive(mutations: [SyncMutation]) async throws {
        let outcome = try await onOwnThread { try RelaydFilesAfterCut.run(mutations: mutations) }
        guard let outcome else { return }
        let label = mutations.isEmpty ? "none" : mutations.map(\.rawValue).joined(separator: ",")
        print("DURABILITY relayd files (mutant: \(label)): \(outcome)")
        let keyKept = outcome.key == "the same key"
        switch Set(mutations) {
        case []:
            #expect(keyKept && outcome.recordListsMailbox, "\(outcome)")
        case [.relayKeyFile], [.relayKeyDirectory], [.relayKeyParent, .mailboxRecordDirectory]:
            #expect(!keyKept, "the check did not see the relay key lost without the \(label) fsync: \(outcome)")
        case [.mailboxRecordDirectory]:
            #expect(keyKept, "relay-key-parent keeps relayd-users even when nothing else syncs the group directory: \(outcome)")
            #expect(!outcome.recordListsMailbox, "the check did not see the record lost: \(outcome)")
        default:
            #expect(!outcome.recordListsMailbox, "the check did not see the record lost without the \(label) fsync: \(outcome)")
        }
    }

    /// relayd's first scan makes `relayd-users` (fsync of the group directory), the key (the
    /// file, then `relayd-users`) and the record (the file, then the group directory): five
    /// fsyncs. The Nth fails with EIO. A directory fsync that failed used to be ignored, so a
    /// name a cut could take named a consumer; now the key or the record is made again.
    @Test("an fsync of relayd's files that fails (EIO, at each of its first five): relayd makes the file again, and a power cut after it keeps the key and the record",
          arguments: 1...5)
    func failedSyncIsRetried(failing: Int) async throws {
        let outcome = try await onOwnThread { try RelaydFilesAfterCut.run(mutations: [], failingSync: failing) }
        guard let outcome else { return }
        print("DURABILITY relayd files (fsync #\(failing) fails): \(outcome)")
        #expect(outcome.faultMet, "relayd's first scan did not reach fsync #\(failing)")
        #expect(outcome.settled, "relayd's files never all became durable after fsync #\(failing) failed: \(outcome)")
        #expect(outcome.key == "the same key" && outcome.recordListsMailbox, "\(outcome)")
    }
}

/// relayd started once on a device whose group directory is on the power-cut file system, the
/// power cut (`all`) once the identity's consumer exists, and what the disk kept of relayd's
/// files.
///
/// ```swift
/// let outcome = try RelaydFilesAfterCut.run(mutations: [.relayKeyFile])   // nil: no nats-server
/// outcome?.key                  // "the same key", "absent", or "other: <what is there>"
/// outcome?.recordListsMailbox   // relayd-mailboxes names the identity's mailbox
/// ```
struct RelaydFilesAfterCut: CustomStringConvertible {
    var key = ""
    var record = ""
    var recordListsMailbox = false
    var cut = ""
    /// With a failing fsync: it was reached, and then nothing stayed unsynced (relayd wrote again).
    var faultMet = false
    var settled = false
    var pending = ""

    var description: String { "key: \(key); record: \(record); cut: \(cut)" + (pending.isEmpty ? "" : "; unsynced: \(pending)") }

    static func run(mutations: [SyncMutation], failingSync: Int? = nil) throws -> RelaydFilesAfterCut? {
        let tmp = try TemporaryDirectory(prefix: "sotto-mutant-relayd")
        let disk = try PowerCutFileSystem.mount(in: tmp.path)
        defer { disk.abandon() }
        guard let rig = try RelayRig.make(groupIn: disk.mountpoint, operatorMode: true) else { return nil }
        defer { rig.tearDown() }
        try disk.syncEverything()  // the device was set up long ago; relayd never ran on it
        let environment = mutations.isEmpty ? [:] : [SyncMutation.variable: mutations.map(\.rawValue).joined(separator: ",")]
        if let failingSync { try disk.fail(.sync, first: failingSync, error: "EIO") }
        try rig.startRelayd(extraEnvironment: environment)  // returns once the consumer the key names exists
        var outcome = RelaydFilesAfterCut()
        if let failingSync {
            outcome.faultMet = try disk.seen(.sync) >= failingSync
            // The retry comes at most 5 s after the failure; until then a directory holds an
            // unsynced entry. (The unsynced writes of a file whose fsync failed stay counted
            // after relayd unlinked it; the cut below shows they cost nothing.)
            outcome.settled = (try? waitUntil("relayd's directories durable", timeout: 20) {
                let pending = try disk.pending()
                outcome.pending = "\(pending)"
                return pending.directories == 0
            }) != nil
        }
        let keyPath = rig.fixture.group.path + "/relayd-users/\(rig.mailbox.clientId).nk"
        let recordPath = rig.fixture.group.path + "/relayd-mailboxes"
        let seed = try String(contentsOfFile: keyPath, encoding: .utf8)

        outcome.cut = try disk.powerCycle(.all) { rig.killRelayd() }
        switch FileManager.default.contents(atPath: keyPath).map({ String(decoding: $0, as: UTF8.self) }) {
        case nil: outcome.key = "absent" + (access(rig.fixture.group.path + "/relayd-users", F_OK) == 0 ? "" : " (relayd-users too)")
        case seed?: outcome.key = "the same key"
        case let other?: outcome.key = "other: \(other.utf8.count) bytes"
        }
        let text = FileManager.default.contents(atPath: recordPath).map { String(decoding: $0, as: UTF8.self) }
        outcome.record = text.map { "\($0.utf8.count) bytes" } ?? "absent"
        outcome.recordListsMailbox = text?.split(separator: "\n").contains { $0 == rig.mailbox.clientId } ?? false
        return outcome
    }
}
