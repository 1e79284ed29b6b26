import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport

/// A group directory ready for a push storm: a keystore holding the recipient's identity and
/// a migrated database with the recipient's inbox and one active conversation whose members
/// are the recipient and `sender`. Pushes are sealed to the recipient and signed by `sender`.
///
/// ```swift
/// let fixture = try StormFixture()
/// let pushes = fixture.sealPushes(count: 2_000)   // [[UInt8]], each a valid payload
/// ```
final class StormFixture: @unchecked Sendable {
    let tmp: TemporaryDirectory
    let group: GroupDirectory
    let runtime: RuntimeDirectory
    let recipient = Identity.generate()
    let sender = Identity.generate()
    let conversationId = Hex.encode(SecureRandom.bytes(16))
    var topic: String { DBConversation.topic(for: conversationId) }

    /// `groupPath`: where the group directory goes (a test file system's mount); default in `tmp`.
    init(groupPath: String? = nil) throws {
        tmp = try TemporaryDirectory(prefix: "sotto-stress")
        group = GroupDirectory(path: groupPath ?? tmp.path + "/group")
        runtime = RuntimeDirectory(path: tmp.path + "/run")
        try group.create()
        try runtime.create()
        let keystore = try Keystore(directory: group.keystorePath, environment: [:], createIfMissing: true)
        try keystore.save(recipient)
        let conn = try SQLiteConnection.open(path: group.databasePath, profile: .worker, create: true)
        try Migrator.migrate(conn)
        let now = WallClock.nowMs()
        let me = MemberEntry(inboxId: recipient.inboxId, publicKey: recipient.publicKey.hex, endpoint: "unix:/tmp/me.sock",
                             clientId: recipient.clientId, profileName: "Me")
        let them = MemberEntry(inboxId: sender.inboxId, publicKey: sender.publicKey.hex, endpoint: "unix:/tmp/them.sock",
                               clientId: sender.clientId, profileName: "Sender")
        try conn.immediateTransaction { () throws(InboxWriteError) in
            _ = try InboxWriter.save(inboxId: recipient.inboxId, clientId: recipient.clientId, now: now, on: conn)
            _ = try InboxWriter.createConversation(
                NewConversation(id: conversationId, inboxId: recipient.inboxId, name: "Storm",
                                creatorInboxId: sender.inboxId, state: .active, createdAt: now, members: [them, me]),
                on: conn)
        }
    }

    /// The environment of every Sotto process of this run (no desktop bus: notifications
    /// fail fast instead of waiting for one).
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["SOTTO_GROUP_DIR"] = group.path
        environment["SOTTO_RUNTIME_DIR"] = runtime.path
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
        environment.removeValue(forKey: "LISTEN_FDS")
        environment.removeValue(forKey: "LISTEN_PID")
        environment.removeValue(forKey: "NOTIFY_SOCKET")
        return environment
    }

    /// `count` valid pushes (distinct message ids, same plaintext shape), sealed in parallel.
    func sealPushes(count: Int, textBytes: Int = 64) -> [SealedPush] {
        let chunks = max(1, min(count, ProcessInfo.processInfo.activeProcessorCount * 4))
        let results = Locked([[SealedPush]](repeating: [], count: chunks))
        let body = Array(repeating: UInt8(ascii: "x"), count: textBytes)
        let (sender, recipient, conversationId, topic) = (self.sender, self.recipient, self.conversationId, self.topic)
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            var made: [SealedPush] = []
            for _ in stride(from: chunk, to: count, by: chunks) {
                let id = Hex.encode(SecureRandom.bytes(16))
                let signed = SignedMessage.sign(id: id, conversationId: conversationId, sentAtMs: WallClock.nowMs(),
                                                contentType: ContentType.text, content: body, fallback: nil,
                                                signer: sender.privateKey)
                let envelope = Envelope.seal(signed.encode(), recipient: recipient.publicKey,
                                             clientId: recipient.clientId, topic: topic)
                made.append(SealedPush(messageId: id,
                                       payload: PushPayload(clientId: recipient.clientId, topic: topic, envelope: envelope).encode()))
            }
            results.update { $0[chunk] = made }
        }
        return results.value.flatMap { $0 }
    }
}

/// One push ready to send, with the message id its ack must name.
struct SealedPush: Sendable {
    let messageId: String
    let payload: [UInt8]
}

/// A value shared between threads behind a lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.lock(); defer { lock.unlock() }; return stored }
    func update<R>(_ body: (inout Value) -> R) -> R { lock.lock(); defer { lock.unlock() }; return body(&stored) }
}
