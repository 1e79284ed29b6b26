import Foundation
import RelayTransport
import SottoCrypto
import SottoWire
import TestSupport

/// Issue #21 for alice's outbox publishing to a relay, all real: alice and bob (`RelayPeers`)
/// through one nats-server, each with a relayd, in one conversation; alice's group directory
/// lies on the power-cut file system (docs/adr/0037), the relay's store and bob do not.
/// `arm` readies a send whose publishing kills alice's daemon at a named step;
/// `sendAndCut` sends, waits for the death and cuts the power; `restartAlice` brings her back.
///
/// ```swift
/// guard let rig = try OutboxPowerCutRig.make() else { return }   // nil: no nats-server
/// defer { rig.tearDown() }
/// try rig.arm("outbox.relayed")
/// let cut = try rig.sendAndCut("hi", at: "outbox.relayed", cut: .torn(seed: 5))
/// try rig.restartAlice()
/// ```
final class OutboxPowerCutRig: @unchecked Sendable {
    let disk: PowerCutFileSystem
    let peers: RelayPeers
    let conversation: String
    /// Bob's mailbox: his relayd is stopped by `arm`, so what the relay holds for him stays.
    let bobBox: Mailbox
    private let diskDirectory: TemporaryDirectory

    var alice: Device { peers["alice"] }
    var bob: Device { peers["bob"] }

    private init(diskDirectory: TemporaryDirectory, disk: PowerCutFileSystem, peers: RelayPeers, conversation: String,
                 bobBox: Mailbox) {
        self.diskDirectory = diskDirectory
        self.disk = disk
        self.peers = peers
        self.conversation = conversation
        self.bobBox = bobBox
    }

    /// nil when nats-server is not installed. The conversation is made (bob joins through the
    /// relay); nothing is armed yet.
    static func make() throws -> OutboxPowerCutRig? {
        let diskDirectory = try TemporaryDirectory(prefix: "sotto-outbox-power")
        let disk = try PowerCutFileSystem.mount(in: diskDirectory.path)
        guard let peers = try RelayPeers.make(["alice", "bob"], groupIn: ["alice": disk.mountpoint]) else {
            disk.abandon()
            return nil
        }
        do {
            let conversation = try peers.conversation(creator: "alice", joiner: "bob")
            return OutboxPowerCutRig(diskDirectory: diskDirectory, disk: disk, peers: peers, conversation: conversation,
                                     bobBox: try peers.mailbox("bob", conversation))
        } catch {
            peers.tearDown()
            disk.abandon()
            throw error
        }
    }

    /// Alice owes nothing (the first publish of her armed daemon is the next send's), bob's
    /// relayd stops, the disk is synced (all this was set up long ago), and alice's daemon
    /// starts again armed at `crashAt`.
    func arm(_ crashAt: String) throws {
        try alice.waitUntil("alice's queues drained", timeoutMs: 60_000) {
            try self.alice.query("SELECT count(*) FROM outbox WHERE state = 'pending'")[0].int64(0) == 0
                && self.alice.query("SELECT count(*) FROM outliving_notice")[0].int64(0) == 0
        }
        peers.stopRelayd("bob")
        try disk.syncEverything()
        alice.stopDaemon()
        try alice.startDaemon(environment: [CrashPoint.variable: crashAt])
    }

    /// Sends `text` and waits for alice's daemon to die at `crashAt` (`died` false: it never
    /// did, and was restarted plainly); the power goes (`cut`) with her relayd and workers.
    func sendAndCut(_ text: String, at crashAt: String, cut: PowerCutFileSystem.Cut) throws -> (died: Bool, summary: String) {
        _ = try alice.cli(["send", conversation, text, "--json"])  // the daemon may die before it answers
        let died = try alice.diedAtCrashPoint(crashAt, timeoutMs: 60_000)
        let summary = try disk.powerCycle(cut) {
            peers.stopRelayd("alice", signal: SIGKILL)
            alice.stopDaemon(signal: SIGKILL)
            alice.stopPushSocket()
        }
        return (died, summary)
    }

    /// The power is back: alice's push socket, daemon and relayd start again.
    func restartAlice() throws {
        try alice.startPushSocket()
        try alice.startDaemon()
        try peers.startRelayd("alice")
    }

    /// Alice's outgoing texts in the conversation (what her disk kept of the send).
    func sentIds() throws -> [String] {
        try alice.query("SELECT id FROM message WHERE conversationId = ? AND isOutgoing = 1 AND contentType = ?",
                        [.text(conversation), .text(ContentType.text)]).map { try $0.string(0) }
    }

    /// How many of the message's outbox rows are in each state.
    func outboxStates(_ messageId: String) throws -> [String: Int] {
        var states: [String: Int] = [:]
        for row in try alice.query("SELECT state, count(*) FROM outbox WHERE messageId = ? GROUP BY state", [.text(messageId)]) {
            states[try row.string(0)] = Int(try row.int64(1))
        }
        return states
    }

    func tearDown() {
        peers.tearDown()
        disk.abandon()
        diskDirectory.remove()
    }
}
