import Foundation
import RelayTransport
import SottoCrypto
import TestSupport
import Testing

/// docs/adr/0056 from relayd's side: the daemon's marks (`awake-mailboxes/<clientId>`) decide
/// which mailboxes hold a connection. Real nats-server (its `/connz`), real relayd and worker;
/// the marks are written by the test as the daemon would, garbage among them.
@Suite("Relay: relayd follows the awake marks", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelaydAwakeMarksTests {
    @Test("an unmarked mailbox holds no connection and is drained on schedule; marked, it is watched; unmarked, it is not; without the directory, every mailbox is watched; garbage marks are ignored")
    func followsTheMarks() throws {
        guard let rig = try RelayRig.make(monitoring: true) else { return }
        defer { rig.tearDown() }
        let marks = rig.fixture.group.awakeMailboxesPath
        try FileManager.default.createDirectory(atPath: marks, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Garbage: a name that is no clientId, a directory, a mark of an identity this device does not have.
        _ = FileManager.default.createFile(atPath: marks + "/not-a-client-id", contents: Data("x".utf8))
        try FileManager.default.createDirectory(atPath: marks + "/" + UUID().uuidString.lowercased(), withIntermediateDirectories: false)
        _ = FileManager.default.createFile(atPath: marks + "/" + UUID().uuidString.lowercased(), contents: nil)

        try rig.startPushSocket()
        try rig.startRelayd(arguments: ["--ack-wait-ms", "3000", "--retry-min-ms", "200", "--sleeping-drain-ms", "1000"])
        // Its watch: the mailbox subject (or, with per-identity users, its wake subject).
        let watched = {
            try RelayLinkage.openConnections(server: rig.server)
                .contains { $0.subscriptions.contains { Mailbox(subject: $0)?.clientId == rig.mailbox.clientId } }
        }

        let asleep = try rig.fixture.sealTextForRelay("to the sleeping mailbox")
        try rig.publish(asleep)
        try waitUntil("the sleeping mailbox was drained", timeout: 60) { try rig.storedMessageIds().contains(asleep.messageId) }
        #expect(try !watched(), "a sleeping mailbox holds no watching connection")

        _ = FileManager.default.createFile(atPath: marks + "/" + rig.mailbox.clientId, contents: nil)
        try waitUntil("the marked mailbox is watched", timeout: 30) { try watched() }
        let awake = try rig.fixture.sealTextForRelay("to the awake mailbox")
        try rig.publish(awake)
        try waitUntil("the awake mailbox was drained", timeout: 60) { try rig.storedMessageIds().contains(awake.messageId) }

        try FileManager.default.removeItem(atPath: marks + "/" + rig.mailbox.clientId)
        try waitUntil("the unmarked mailbox is no longer watched", timeout: 30) { try !watched() }
        let again = try rig.fixture.sealTextForRelay("asleep again")
        try rig.publish(again)
        try waitUntil("the mailbox asleep again was drained", timeout: 60) { try rig.storedMessageIds().contains(again.messageId) }

        try FileManager.default.removeItem(atPath: marks)
        try waitUntil("without the marks' directory every mailbox is watched", timeout: 30) { try watched() }
        #expect(rig.relayd?.isRunning == true)
    }
}
