import DaemonStore
import Foundation
import SharedStore
import SottoCrypto
import SottoWire

/// A fresh group directory seeded for one vectors file exactly as PROTOCOL §7 says: the
/// recipient's identity in the keystore (built from the vector's private key and clientId),
/// a migrated database holding its inbox and its conversation (the vector's id and topic,
/// not expired) with the listed members, plus one extra member, `sender`, whose private key
/// this fixture holds so tests can seal their own valid pushes.
///
/// ```swift
/// let vectors = try #require(try Vectors.load())
/// let f = try WorkerFixture(vectors: vectors)
/// let push = f.sealText("hi")                       // a valid push from `sender`
/// let ack = try ChildProcess.run(worker, ["--payload", "-"], environment: f.environment,
///                                stdin: String(decoding: push.payload, as: UTF8.self) + "\n")
/// ```
public final class WorkerFixture: @unchecked Sendable {
    public let tmp: TemporaryDirectory
    public let group: GroupDirectory
    public let runtimeDirectory: String
    public let vectors: Vectors.File
    /// A member of the conversation whose key the tests hold (the vectors do not include
    /// their sender's private key).
    public let senderKey = PrivateKey.generate()
    public let senderProfileName = "Sam"
    /// With `holdsCreatorKey`: the creator, a member whose key the tests hold (`sender` is
    /// then a member who is not the creator, as it always is).
    public let creatorKey: PrivateKey?
    public let creatorProfileName = "Cleo"
    public let conversationName: String?
    /// The recipient's device is the creator's (a request only the creator answers).
    public let recipientCreates: Bool
    public let now = WallClock.nowMs()
    /// The recipient identity's content keys (docs/adr/0052), on every connection `open()` gives.
    public let contentKeys = ContentKeyring()

    /// The conversation's creator: `creatorKey`'s inbox, else the first listed member that is
    /// not the recipient (the vectors' explode_settings comes from it).
    public var creatorInboxId: String {
        if recipientCreates { return vectors.recipient.inboxId }
        if let creatorKey { return creatorKey.publicKey.inboxId }
        return vectors.members.first { $0.inboxId != vectors.recipient.inboxId }?.inboxId ?? vectors.recipient.inboxId
    }

    public var recipient: Vectors.Recipient { vectors.recipient }

    /// `conversationName` nil leaves the conversation unnamed, so notifications show the
    /// sender's profile name. `groupIn`: where the group directory goes instead of `tmp` (a test
    /// file system's mount).
    public init(vectors: Vectors.File, conversationName: String? = "Trip", holdsCreatorKey: Bool = false,
                recipientCreates: Bool = false, groupIn: String? = nil) throws {
        self.vectors = vectors
        self.recipientCreates = recipientCreates
        self.conversationName = conversationName
        self.creatorKey = holdsCreatorKey ? PrivateKey.generate() : nil
        tmp = try TemporaryDirectory(prefix: "sotto-wk")
        group = GroupDirectory(path: (groupIn ?? tmp.path) + "/group")
        runtimeDirectory = tmp.path + "/run"
        try group.create()
        try FileManager.default.createDirectory(atPath: runtimeDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])

        let keystore = try Keystore(directory: group.keystorePath, environment: [:], createIfMissing: true)
        let identity = try vectors.recipient.identity()
        try keystore.save(identity)
        contentKeys.remember(identity)

        let conn = try SQLiteConnection.open(path: group.databasePath, profile: .worker, create: true)
        conn.contentKeys = contentKeys   // names seeded sealed, as the daemon writes them (docs/adr/0052)
        try Migrator.migrate(conn)
        let r = vectors.recipient
        var members = vectors.members.map {
            MemberEntry(inboxId: $0.inboxId, publicKey: $0.publicKey, endpoint: "unix:/tmp/\($0.inboxId.prefix(8)).sock",
                        clientId: $0.inboxId == r.inboxId ? r.clientId : SecureRandom.uuidV4(),
                        profileName: $0.profileName.isEmpty ? nil : $0.profileName)
        }
        members.append(MemberEntry(inboxId: senderKey.publicKey.inboxId, publicKey: senderKey.publicKey.hex,
                                   endpoint: "unix:/tmp/sam.sock", clientId: SecureRandom.uuidV4(),
                                   profileName: senderProfileName))
        if let creatorKey {
            members.append(MemberEntry(inboxId: creatorKey.publicKey.inboxId, publicKey: creatorKey.publicKey.hex,
                                       endpoint: "unix:/tmp/cleo.sock", clientId: SecureRandom.uuidV4(),
                                       profileName: creatorProfileName))
        }
        let new = NewConversation(id: r.conversationId, inboxId: r.inboxId, name: conversationName,
                                  creatorInboxId: creatorInboxId, state: .active, createdAt: now, members: members)
        precondition(DBConversation.topic(for: r.conversationId) == r.topic, "vectors topic does not match conversationId")
        try conn.immediateTransaction { () throws(InboxWriteError) in
            try InboxWriter.save(inboxId: r.inboxId, clientId: r.clientId, now: now, on: conn)
            try InboxWriter.createConversation(new, on: conn)
        }
    }

    // MARK: - Running the worker

    /// The environment a worker needs for this group (no credentials directory: the
    /// keystore's master.key is used).
    public var environment: [String: String] {
        ["SOTTO_GROUP_DIR": group.path, "SOTTO_RUNTIME_DIR": runtimeDirectory,
         "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(tmp.path)/no-bus"]
    }

    /// A read-write connection for assertions and set-up, with the recipient's content keys:
    /// repositories on it open sealed cells; raw SQL sees them sealed.
    public func open() throws -> SQLiteConnection {
        let conn = try SQLiteConnection.open(path: group.databasePath, profile: .worker)
        conn.contentKeys = contentKeys
        return conn
    }

    // MARK: - Sealing pushes from `sender`

    /// A push payload and the message id inside it.
    public struct Push: Sendable {
        public let messageId: String
        public let payload: [UInt8]
    }

    /// A valid push: `contentType`/`content` signed by `sender` (or `signer`), sealed to the
    /// recipient for its clientId and topic.
    public func seal(contentType: String, content: [UInt8], fallback: String? = nil,
                     id: String = Hex.encode(SecureRandom.bytes(16)), signer: PrivateKey? = nil,
                     sentAtMs: Int64? = nil, conversationId: String? = nil) throws -> Push {
        let message = SignedMessage.sign(id: id, conversationId: conversationId ?? recipient.conversationId,
                                         sentAtMs: sentAtMs ?? now, contentType: contentType, content: content,
                                         fallback: fallback, signer: signer ?? senderKey)
        return Push(messageId: id, payload: try seal(plaintext: message.encode()))
    }

    /// Any envelope plaintext (well-formed or not, signed or not), sealed to the recipient
    /// for its clientId and topic: what a hostile sender can put on the wire.
    public func seal(plaintext: [UInt8]) throws -> [UInt8] {
        let recipientKey = try PrivateKey(bytes: recipient.privateKey).publicKey
        let envelope = Envelope.seal(plaintext, recipient: recipientKey, clientId: recipient.clientId,
                                     topic: recipient.topic)
        return PushPayload(clientId: recipient.clientId, topic: recipient.topic, envelope: envelope).encode()
    }

    /// A push whose content travels by reference (docs/protocol/bodies.md), and the sealed
    /// body to write after its LF.
    public struct ReferencePush: Sendable {
        public let messageId: String
        public let payload: [UInt8]
        public let body: [UInt8]

        /// The body id the push names.
        public var bodyId: String { (try? PushPayload.decode(payload))?.body?.id ?? "" }
        /// As the relay tests publish pushes.
        public var push: Push { Push(messageId: messageId, payload: payload) }
    }

    /// `content` sealed once into a body, the reference signed by `sender` (or `signer`) and
    /// sealed to the recipient with the body named in the payload.
    /// `showTopic: false`: as a sender writes it for a relay (PROTOCOL §2, 1.1).
    public func byReference(contentType: String, content: [UInt8], signer: PrivateKey? = nil,
                            id: String = Hex.encode(SecureRandom.bytes(16)), showTopic: Bool = true) -> ReferencePush {
        let body = SealedBody.seal(content)
        let reference = BodyReference(body, contentType: contentType, fallback: nil)
        let message = SignedMessage.sign(id: id, conversationId: recipient.conversationId, sentAtMs: now,
                                         contentType: ContentType.body, content: reference.encode(),
                                         fallback: BodyReference.outerFallback, signer: signer ?? senderKey)
        let recipientKey = try! PrivateKey(bytes: recipient.privateKey).publicKey
        let envelope = Envelope.seal(message.encode(), recipient: recipientKey, clientId: recipient.clientId,
                                     topic: recipient.topic)
        let payload = PushPayload(clientId: recipient.clientId, topic: showTopic ? recipient.topic : nil, envelope: envelope,
                                  body: reference.hint).encode()
        return ReferencePush(messageId: id, payload: payload, body: body.sealed)
    }

    public func sealText(_ text: String, id: String = Hex.encode(SecureRandom.bytes(16))) throws -> Push {
        try seal(contentType: ContentType.text, content: Array(text.utf8), id: id)
    }

    // MARK: - Observing the database

    /// Row counts of every table and change_log's max seq: equal snapshots mean nothing was
    /// written.
    public func snapshot() throws -> [String: Int64] {
        let conn = try open()
        var out: [String: Int64] = [:]
        let tables = try conn.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        for row in tables {
            let name = try row.string(0)
            out[name] = try conn.queryOne("SELECT count(*) FROM \"\(name)\"")?.int64(0) ?? -1
        }
        out["change_log.maxSeq"] = try conn.queryOne("SELECT coalesce(max(seq), 0) FROM change_log")?.int64(0) ?? -1
        return out
    }

    /// `snapshot()` now with the tables an ok push writes (its message, its change_log row,
    /// the receipt its sender is owed: docs/protocol/receipts.md §4) taken from `before`:
    /// equal to `before` when the push wrote nothing else.
    public func snapshotBesidesMessage(since before: [String: Int64]) throws -> [String: Int64] {
        var after = try snapshot()
        for table in ["change_log.maxSeq", "change_log", "message", "receipt_due"] { after[table] = before[table] }
        return after
    }

    /// The receipts the worker recorded as owed: (message id, status, error code).
    public func receiptsDue() throws -> [(messageId: String, status: String, error: String?)] {
        try open().query("SELECT messageId, status, error FROM receipt_due ORDER BY messageId").map {
            (try $0.string(0), try $0.string(1), try $0.optionalString(2))
        }
    }

    /// Every row of every table (`DatabaseDump`): equal dumps mean nothing was written.
    public func tableContents() throws -> [String: [String]] {
        try DatabaseDump.tables(path: group.databasePath)
    }

    /// The stored message row, or nil.
    public func message(id: String) throws -> StoredMessage? {
        guard let row = try MessageRowRepository.find(id: id, on: try open()) else { return nil }
        return StoredMessage(id: row.id, conversationId: row.conversationId, senderInboxId: row.senderInboxId,
                             sentAtMs: row.sentAt, contentType: row.contentType, content: row.content,
                             fallback: row.fallback)
    }

    /// The conversation's expiresAt (Unix ms), nil when not exploding.
    public func conversationExpiresAt() throws -> Int64? {
        let conn = try open()
        return try conn.queryOne("SELECT expiresAt FROM conversation WHERE id = ?", [.text(recipient.conversationId)])?
            .optionalInt64(0)
    }

    /// One stored message's fields as the tests compare them.
    public struct StoredMessage: Sendable, Equatable {
        public let id: String
        public let conversationId: String
        public let senderInboxId: String
        public let sentAtMs: Int64
        public let contentType: String
        public let content: [UInt8]
        public let fallback: String?
    }
}
