import SharedStore
import SottoCrypto
import SottoWire

/// Another device in a conversation the daemon created: a fresh identity, added to the
/// conversation's members in the shared database, that seals pushes to the daemon's inbox
/// exactly as a real sender would (sign once, seal for the recipient, PROTOCOL §2–4). The
/// payloads go to a real worker (`sotto-notify --payload -`).
///
/// ```swift
/// let member = try RemoteMember.join(conversationId: id, databasePath: home.databasePath)
/// let payload = try member.push("hello", databasePath: home.databasePath)
/// let ack = try ChildProcess.run(try builtExecutable("sotto-notify"), ["--payload", "-"], stdin: …)
/// ```
public struct RemoteMember: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public let identity: Identity
    public let conversationId: String
    /// The daemon-side member this sender pushes to (its public key, clientId, topic).
    public let recipientPublicKey: String
    public let recipientClientId: String
    public let topic: String

    /// Creates an identity (or takes `identity`) and inserts it as a `member` of the
    /// conversation, reached at `endpoint`, in one IMMEDIATE transaction on a connection of
    /// its own (a foreign writer, like a worker).
    public static func join(conversationId: String, databasePath: String, name: String = "Remote",
                            identity: Identity = Identity.generate(),
                            endpoint: String = "unix:/nonexistent/remote.sock") throws -> RemoteMember {
        let conn = try SQLiteConnection.open(path: databasePath, profile: .worker)
        // The device's own member row (its inbox), whatever other members joined.
        guard let conversation = try ConversationRepository.find(id: conversationId, on: conn),
              let recipient = try MemberRepository.members(of: conversationId, on: conn)
                  .first(where: { $0.inboxId == conversation.inboxId }) else {
            throw Failure(description: "conversation \(conversationId) has no members")
        }
        try conn.immediateTransaction { () throws(StoreError) in
            try conn.run("""
                INSERT INTO member(conversationId, inboxId, publicKey, endpoint, clientId, role)
                VALUES (?, ?, ?, ?, ?, 'member')
                """, [.text(conversationId), .text(identity.inboxId), .text(identity.publicKey.hex),
                      .text(endpoint), .text(identity.clientId)])
            try conn.run("INSERT INTO member_profile(conversationId, inboxId, name) VALUES (?, ?, ?)",
                         [.text(conversationId), .text(identity.inboxId), .text(name)])
        }
        return RemoteMember(identity: identity, conversationId: conversationId, recipientPublicKey: recipient.publicKey,
                            recipientClientId: recipient.clientId, topic: conversation.topic)
    }

    /// Someone who holds an identity but is no member: pushes it seals reach the worker like
    /// a member's, and are refused there.
    public static func outsider(conversationId: String, databasePath: String) throws -> RemoteMember {
        let conn = try SQLiteConnection.open(path: databasePath, profile: .worker)
        guard let conversation = try ConversationRepository.find(id: conversationId, on: conn),
              let recipient = try MemberRepository.members(of: conversationId, on: conn)
                  .first(where: { $0.inboxId == conversation.inboxId }) else {
            throw Failure(description: "conversation \(conversationId) has no members")
        }
        return RemoteMember(identity: Identity.generate(), conversationId: conversationId, recipientPublicKey: recipient.publicKey,
                            recipientClientId: recipient.clientId, topic: conversation.topic)
    }

    /// A sealed push payload carrying `text` (message id random unless given), ready for a worker.
    public func push(_ text: String, id: String = Hex.encode(SecureRandom.bytes(16)),
                     sentAtMs: Int64 = WallClock.nowMs()) throws -> [UInt8] {
        try push(contentType: "xmtp.org/text:1.0", content: Array(text.utf8), id: id, sentAtMs: sentAtMs)
    }

    /// A sealed push of any content type, signed by this member: what a member can send
    /// whether or not the protocol lets it (a non-creator's explode_settings, a membership…).
    public func push(contentType: String, content: [UInt8], fallback: String? = nil,
                     id: String = Hex.encode(SecureRandom.bytes(16)), sentAtMs: Int64 = WallClock.nowMs()) throws -> [UInt8] {
        let signed = SignedMessage.sign(id: id, conversationId: conversationId, sentAtMs: sentAtMs,
                                        contentType: contentType, content: content, fallback: fallback,
                                        signer: identity.privateKey)
        let envelope = Envelope.seal(signed.encode(), recipient: try PublicKey(hex: recipientPublicKey),
                                     clientId: recipientClientId, topic: topic)
        return PushPayload(clientId: recipientClientId, topic: topic, envelope: envelope).encode()
    }
}
