import Foundation
import RelayTransport
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport

/// Two real devices and a relay, for what happens to a member who is offline: `alice` creates
/// a conversation and `bob` joins it (real daemons, real push sockets with the real worker),
/// then alice leaves the machine and the test speaks as her: it signs with her keystore
/// identity and publishes into bob's mailbox on a real `nats-server -js`, as her daemon would
/// through a relay (topic omitted, PROTOCOL §2 1.1). Bob's `sotto-relayd` and daemon are
/// started and stopped by the test.
///
/// ```swift
/// guard let rig = try OfflineMemberRig.make() else { return }
/// defer { rig.tearDown() }
/// try rig.startRelayd(); rig.stopRelayd(); rig.bob.stopDaemon()      // bob goes offline
/// let push = try rig.push(text: "hi", signer: rig.alice.privateKey)
/// try rig.publish(push, to: rig.trip.mailbox)
/// ```
final class OfflineMemberRig: @unchecked Sendable {
    /// What the relay and a sender know of bob's side of one conversation.
    struct Inbox: Sendable {
        let conversationId: String
        let inboxId: String
        let clientId: String
        let topic: String
        let publicKey: String
        let mailbox: Mailbox
    }

    /// A push payload and the message id inside it.
    struct Push: Sendable {
        let messageId: String
        let payload: [UInt8]
        let envelope: [UInt8]
    }

    let tmp: TemporaryDirectory
    let server: NatsServer
    let bob: Device
    /// Alice's identity in the conversation: she created it, so her explode_settings counts.
    let alice: Identity
    /// Bob's inbox in alice's conversation.
    let trip: Inbox
    private let relaydRuns = RelaydRuns()
    var relayd: LoggedProcess? { relaydRuns.current }
    private var publisherConnection: RelayConnection?

    private init(tmp: TemporaryDirectory, server: NatsServer, bob: Device, alice: Identity, trip: Inbox) {
        self.tmp = tmp
        self.server = server
        self.bob = bob
        self.alice = alice
        self.trip = trip
    }

    /// nil when nats-server is not installed. Alice's daemon is stopped before this returns,
    /// with nothing left in her outbox.
    static func make() throws -> OfflineMemberRig? {
        guard NatsServer.isInstalled else {
            print(NatsServer.skipMessage)
            return nil
        }
        let tmp = try TemporaryDirectory(prefix: "sotto-ex")
        let server = try NatsServer.start(storeDirectory: tmp.path + "/jetstream")
        let alice = try Device.start("alice", in: tmp.path)
        let bob = try Device.start("bob", in: tmp.path)
        let tripId = try field(try alice.json(["new", "--name", "Trip"]), "conversationId")
        let code = try field(try alice.json(["invite", tripId, "--expires", "1h"]), "code")
        _ = try bob.json(["join", code, "--profile-name", "bob"])
        try bob.waitUntil("bob active in Trip") { try bob.conversation(tripId)?["state"] as? String == "active" }
        try alice.waitUntil("alice lists bob") { try alice.conversation(tripId)?["members"] as? Int == 2 }
        try alice.waitUntil("alice's outbox has nothing pending") {
            try alice.query("SELECT count(*) FROM outbox WHERE state = 'pending'")[0].int64(0) == 0
        }
        let aliceInbox = try field(try alice.conversation(tripId) ?? [:], "inboxId")
        let identity = try Keystore(directory: alice.group.keystorePath, environment: [:]).identity(inboxId: aliceInbox)
        alice.stop()
        return OfflineMemberRig(tmp: tmp, server: server, bob: bob, alice: identity,
                                trip: try inbox(of: bob, conversationId: tripId))
    }

    /// Bob's inbox in `conversationId`, read from his database.
    static func inbox(of device: Device, conversationId: String) throws -> Inbox {
        guard let row = try device.query("""
            SELECT c.inboxId, c.clientId, c.topic, m.publicKey FROM conversation c
            JOIN member m ON m.conversationId = c.id AND m.inboxId = c.inboxId WHERE c.id = ?
            """, [.text(conversationId)]).first else {
            throw RelayRigFailure("\(device.name) has no conversation \(conversationId)")
        }
        let clientId = try row.string(1)
        return Inbox(conversationId: conversationId, inboxId: try row.string(0), clientId: clientId,
                     topic: try row.string(2), publicKey: try row.string(3), mailbox: try Mailbox(clientId: clientId))
    }

    private static func field(_ object: [String: Any], _ name: String) throws -> String {
        guard let value = object[name] as? String else { throw RelayRigFailure("no \(name) in \(object)") }
        return value
    }

    // MARK: - Bob's relayd

    func startRelayd() throws {
        let environment = bob.environment.merging(["SOTTO_RELAY": server.url, "PATH": "/usr/bin:/bin"]) { $1 }
        // --gone-after-ms 500: the purge after an explode within a test's patience (default 10 s).
        let process = try relaydRuns.launch(["--gone-after-ms", "500", "--ack-wait-ms", "3000", "--retry-min-ms", "200"], environment: environment)
        guard process.waitForLine(containing: "identity added: \(trip.mailbox)", timeout: 30) else {
            throw RelayRigFailure("sotto-relayd did not open bob's mailbox: \(process.output.suffix(8))")
        }
        try waitUntil("bob's consumer exists", timeout: 30) { try self.publisher().consumerState(self.trip.mailbox) != nil }
    }

    func stopRelayd() { relaydRuns.stop() }

    /// Every line bob's sotto-relayd printed, across restarts.
    var relaydOutput: [String] { relaydRuns.output }

    // MARK: - Speaking as a sender

    /// A text message signed by `signer`, sealed to bob's inbox `to` without a topic.
    func push(text: String, signer: Identity, to inbox: Inbox? = nil) throws -> Push {
        try push(contentType: ContentType.text, content: Array(text.utf8), fallback: nil, signer: signer, to: inbox ?? trip)
    }

    /// An explode request (`explode_settings`) for `expiresAtMs`, signed by `signer`.
    func explode(at expiresAtMs: Int64, signer: Identity, to inbox: Inbox? = nil) throws -> Push {
        let wire = ISO8601.string(fromMillis: expiresAtMs)
        return try push(contentType: ContentType.explodeSettings, content: JSONWriter.bytes(["expiresAt": .string(wire)]),
                        fallback: "Conversation expires at \(wire)", signer: signer, to: inbox ?? trip)
    }

    private func push(contentType: String, content: [UInt8], fallback: String?, signer: Identity,
                      to inbox: Inbox) throws -> Push {
        let signed = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: inbox.conversationId,
                                        sentAtMs: WallClock.nowMs(), contentType: contentType, content: content,
                                        fallback: fallback, signer: signer.privateKey)
        let envelope = Envelope.seal(signed.encode(), recipient: try PublicKey(hex: inbox.publicKey),
                                     clientId: inbox.clientId, topic: inbox.topic)
        return Push(messageId: signed.id, payload: PushPayload(clientId: inbox.clientId, topic: nil, envelope: envelope).encode(),
                    envelope: envelope)
    }

    /// A connection for publishing and inspecting the relay.
    func publisher() throws -> RelayConnection {
        if let publisherConnection { return publisherConnection }
        let connection = try RelayConnection.testPublisher(server.url)
        try connection.ensureStream()
        publisherConnection = connection
        return connection
    }

    /// Publishes `payload` into `mailbox` as a sender's outbox would (Nats-Msg-Id = message id).
    func publish(_ payload: [UInt8], messageId: String, to mailbox: Mailbox) throws {
        let ack = try publisher().publish(payload, to: mailbox, messageId: messageId)
        guard !ack.duplicate else { throw RelayRigFailure("publish of \(messageId) was a duplicate") }
    }

    // MARK: - Observing bob

    /// Ids of the messages bob stored in `conversationId`, in the order he stored them.
    func storedMessageIds(in conversationId: String) throws -> [String] {
        try bob.query("SELECT id FROM message WHERE conversationId = ? ORDER BY rowid", [.text(conversationId)])
            .map { try $0.string(0) }
    }

    /// Rows anywhere in bob's database that still belong to `inbox` (0 after an explode).
    func rowsLeft(of inbox: Inbox) throws -> Int64 {
        let id = SQLiteValue.text(inbox.conversationId)
        let counts = try [
            bob.query("SELECT count(*) FROM conversation WHERE id = ?", [id]),
            bob.query("SELECT count(*) FROM message WHERE conversationId = ?", [id]),
            bob.query("SELECT count(*) FROM member WHERE conversationId = ?", [id]),
            bob.query("SELECT count(*) FROM inbox WHERE inboxId = ? OR clientId = ?", [.text(inbox.inboxId), .text(inbox.clientId)]),
            bob.query("SELECT count(*) FROM inbox_tombstone WHERE clientId = ?", [.text(inbox.clientId)]),
        ].map { try $0[0].int64(0) }
        return counts.reduce(0, +)
    }

    /// Bob's keystore files of `inbox` (its identity and its inboxId alias) that still exist.
    func keystoreFilesLeft(of inbox: Inbox) -> [String] {
        [inbox.clientId + ".identity", inbox.inboxId + ".inbox"].filter {
            FileManager.default.fileExists(atPath: bob.group.keystorePath + "/" + $0)
        }
    }

    func tearDown() {
        stopRelayd()
        publisherConnection?.close()
        bob.stop()
        server.stop()
        tmp.remove()
    }
}
