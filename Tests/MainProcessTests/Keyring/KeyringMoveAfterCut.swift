import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport

/// One run of the master key's move into the Secret Service with the group directory on the
/// power-cut file system: an old install (`SOTTO_KEY_STORE=file`, one message) whose daemon,
/// started in keyring mode, dies at `point`; the power goes (`cut`); the daemon starts again
/// and finishes the move; the power goes once more (`all`) and the daemon starts again.
/// What each stage left is recorded for the test to judge.
///
/// ```swift
/// let outcome = try KeyringMoveAfterCut.run("keyring.keyStored", .all, mutation: nil)
/// outcome.oldKeyFoundIn   // ["freed/…"]: files on the disk (named or freed) holding the old key
/// ```
struct KeyringMoveAfterCut: CustomStringConvertible {
    var diedAtPoint = false
    var pendingAtCut = ""
    var cuts: [String] = []
    var keyringHoldsOldKey = false
    var leftAfterRestart: [String] = []
    var leftAfterSecondCut: [String] = []
    var oldKeyFoundIn: [String] = []
    var textsAfterRestart: [String] = []
    var pushAfterMoveAcked = false
    var textsAfterSecondCut: [String] = []

    var description: String {
        "died=\(diedAtPoint) pending at the cut: \(pendingAtCut); cuts: \(cuts.joined(separator: " | ")); "
            + "keyring holds the old key=\(keyringHoldsOldKey) left=\(leftAfterRestart)/\(leftAfterSecondCut) "
            + "old key in \(oldKeyFoundIn) texts=\(textsAfterRestart)/\(textsAfterSecondCut)"
    }

    static func run(_ point: String, _ cut: PowerCutFileSystem.Cut, mutation: SyncMutation?) throws -> KeyringMoveAfterCut {
        var outcome = KeyringMoveAfterCut()
        let tmp = try TemporaryDirectory(prefix: "keyring-cut")
        defer { tmp.remove() }
        let disk = try PowerCutFileSystem.mount(in: tmp.path, keepFreed: true)
        defer { disk.abandon() }
        // Its files are under tmp/secret-service, not on the power-cut file system.
        let keyring = try SecretServiceSession.start(in: tmp.path)
        defer { keyring.stop() }
        let alice = try Device.start("alice", in: tmp.path,
                                     environment: ["DBUS_SESSION_BUS_ADDRESS": keyring.busAddress, "SOTTO_KEY_STORE": "file"],
                                     groupIn: disk.mountpoint)
        defer {
            alice.stop()
            forgetKernelKey(alice)
        }
        // The old install, long ago: its key in a file, one message.
        guard let conversation = try alice.json(["new", "--name", "Trip"])["conversationId"] as? String else {
            throw Device.Failure(message: "new returned no id")
        }
        let member = try RemoteMember.join(conversationId: conversation, databasePath: alice.group.databasePath)
        let first = try PushClient.send(try member.push("old install"), to: alice.runtime.pushSocketPath)
        guard first.contains("\"ok\":true") else { throw Device.Failure(message: "the old install's push: \(first)") }
        guard let oldKey = FileManager.default.contents(atPath: alice.group.keystorePath + "/master.key").map({ [UInt8]($0) }),
              oldKey.count == 32 else { throw Device.Failure(message: "no 32-byte master.key") }
        alice.stopDaemon()
        try disk.syncEverything()

        // The move, killed at `point`; the power goes with it.
        let moving = keyring.environment.merging([CrashPoint.variable: point]) { $1 }
        try alice.launchDaemon(environment: moving)
        outcome.diedAtPoint = try alice.diedAtCrashPoint(point, timeoutMs: 30_000)
        let pending = try disk.pending()
        outcome.pendingAtCut = "files=\(pending.files) writes=\(pending.writes) directories=\(pending.directories)"
        outcome.cuts.append(try powerCycle(disk, cut, alice, keyring))

        // The next boot finishes the move.
        let finishing = keyring.environment.merging(mutation.map { [SyncMutation.variable: $0.rawValue] } ?? [:]) { $1 }
        try alice.startDaemon(environment: finishing)
        outcome.keyringHoldsOldKey = try keyring.lookup(group: alice.group.path) == Hex.encode(oldKey)
        outcome.leftAfterRestart = leftovers(alice)
        outcome.textsAfterRestart = alice.messages(conversation).compactMap { $0["text"] as? String }
        let second = try PushClient.send(try member.push("after the move"), to: alice.runtime.pushSocketPath)
        outcome.pushAfterMoveAcked = second.contains("\"ok\":true")

        // The power goes again, the move over: what the disk kept of it.
        outcome.cuts.append(try powerCycle(disk, .all, alice, keyring))
        outcome.leftAfterSecondCut = leftovers(alice)
        outcome.oldKeyFoundIn = FileSearch.files(containing: oldKey, under: disk.backing).map { "disk/" + $0 }
            + FileSearch.files(containing: oldKey, under: disk.freed).map { "freed/" + $0 }
        try alice.startDaemon(environment: keyring.environment)
        outcome.textsAfterSecondCut = alice.messages(conversation).compactMap { $0["text"] as? String }
        alice.stop()
        try disk.unmount()
        return outcome
    }

    /// The power goes: alice's daemon and workers stop, the disk keeps what was fsynced, the
    /// kernel keyring forgets, the keyring daemon starts again at the next login (from its own
    /// disk, which was not cut). The push socket comes back for the next start.
    private static func powerCycle(_ disk: PowerCutFileSystem, _ cut: PowerCutFileSystem.Cut, _ alice: Device,
                                   _ keyring: SecretServiceSession) throws -> String {
        let summary = try disk.powerCycle(cut) {
            alice.stopPushSocket()
            alice.stopDaemon(signal: SIGKILL)
        }
        forgetKernelKey(alice)
        try keyring.unlock()
        try alice.startPushSocket()
        return summary
    }

    private static func forgetKernelKey(_ alice: Device) {
        let ring = KernelKeyring(description: KernelKeyring.description(keystoreDirectory: alice.group.keystorePath))
        if let serial = ring.search() { ring.invalidate(serial: serial) }
    }

    /// What the move must not leave in the keystore: the key file, a temp file, a file being wiped.
    private static func leftovers(_ alice: Device) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: alice.group.keystorePath)) ?? [])
            .filter { $0 == "master.key" || $0.hasPrefix(".tmp-") || $0.hasPrefix(".deleted-") }
    }
}
