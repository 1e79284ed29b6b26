import Foundation
import SharedStore
import SottoCrypto
import SottoWire

/// A migrated group directory seeded with one inbox, one active conversation, its creator
/// and one other member (`sender`), for store tests in both test targets.
///
/// ```swift
/// let f = try StoreFixture()
/// let conn = try f.open()
/// try IncomingMessageWriter.write(f.text("hi"), recipientInboxId: f.inboxId, topic: f.topic, now: f.now, on: conn)
/// ```
public final class StoreFixture: @unchecked Sendable {
    public let tmp: TemporaryDirectory
    public let directory: GroupDirectory
    public let inboxId = StoreFixture.randomHex(32)
    public let clientId = SecureRandom.uuidV4()
    public let conversationId = StoreFixture.randomHex(16)
    public let creator = MemberEntry(inboxId: StoreFixture.randomHex(32), publicKey: "02" + StoreFixture.randomHex(32),
                                     endpoint: "unix:/tmp/creator.sock", clientId: SecureRandom.uuidV4(),
                                     profileName: "Creator")
    public let sender = MemberEntry(inboxId: StoreFixture.randomHex(32), publicKey: "03" + StoreFixture.randomHex(32),
                                    endpoint: "unix:/tmp/sender.sock", clientId: SecureRandom.uuidV4(),
                                    profileName: "Sender")
    public let now: Int64 = 1_763_760_000_000

    public var topic: String { DBConversation.topic(for: conversationId) }

    /// Creates, migrates and seeds the database (unless `seed` is false: then it is empty).
    public init(seed: Bool = true) throws {
        tmp = try TemporaryDirectory()
        directory = GroupDirectory(path: tmp.path + "/group")
        try directory.create()
        guard seed else { return }
        let conn = try SQLiteConnection.open(path: directory.databasePath, profile: .worker, create: true)
        try Migrator.migrate(conn)
        try seedInbox(on: conn)
    }

    /// Seeds this fixture's inbox and conversation (the recipient is a member, the creator
    /// is someone else) on `conn`, in one transaction.
    public func seedInbox(on conn: SQLiteConnection) throws {
        let me = MemberEntry(inboxId: inboxId, publicKey: "02" + Self.randomHex(32),
                             endpoint: "unix:/tmp/me.sock", clientId: clientId, profileName: "Me")
        try conn.immediateTransaction { () throws(InboxWriteError) in
            try InboxWriter.save(inboxId: inboxId, clientId: clientId, now: now, on: conn)
            try InboxWriter.createConversation(
                NewConversation(id: conversationId, inboxId: inboxId, name: "Trip",
                                creatorInboxId: creator.inboxId, state: .active, createdAt: now,
                                members: [creator, sender, me]),
                on: conn)
        }
    }

    /// A worker-style connection (raw SQLite, worker profile).
    public func open(profile: ConnectionProfile = .worker) throws -> SQLiteConnection {
        try SQLiteConnection.open(path: directory.databasePath, profile: profile)
    }

    /// A text message from `sender` (or `from`).
    public func text(_ body: String, id: String = StoreFixture.randomHex(16), from: MemberEntry? = nil,
                     sentAt: Int64? = nil) -> IncomingMessage {
        message(kind: .stored(referenceId: nil), id: id, from: from ?? sender,
                contentType: "xmtp.org/text:1.0", content: Array(body.utf8), sentAt: sentAt)
    }

    public func message(kind: IncomingMessage.Kind, id: String = StoreFixture.randomHex(16),
                        from: MemberEntry, contentType: String, content: [UInt8] = [],
                        sentAt: Int64? = nil) -> IncomingMessage {
        IncomingMessage(id: id, conversationId: conversationId, senderInboxId: from.inboxId,
                        senderPublicKey: from.publicKey, sentAtMs: sentAt ?? now, contentType: contentType,
                        content: content, fallback: nil, kind: kind)
    }

    public static func randomHex(_ bytes: Int) -> String {
        Hex.encode(SecureRandom.bytes(bytes))
    }
}
