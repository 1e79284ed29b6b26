import Dispatch
import Foundation
import DaemonStore
import SharedStore
import SottoCrypto
import SottoWire
import Synchronization

/// Turns one message into what the outbox delivers: signed once by the conversation's
/// identity (PROTOCOL §4), then sealed separately for each other member's public key,
/// clientId and the conversation's topic (§3), each in its own push payload (§2; without the
/// topic when the member's endpoint is a relay).
///
/// When the message does not fit one member's 4096-byte push, every member's push goes by
/// reference (docs/protocol/bodies.md): the content is sealed once into a body, and each push
/// carries a signed `sotto/body:1.0` reference to it; the body is stored once beside the
/// message (`OutboxBodyWriter`, docs/adr/0032).
///
/// ```swift
/// let composed = try MessageComposer.compose(contentType: ContentType.text, content: Array(longText.utf8),
///                                            fallback: nil, conversation: conv, members: members,
///                                            sender: identity, now: now)
/// composed.body            // nil: inline; else the sealed body each push references
/// try composed.insert(now: now, on: conn)     // message, outbox rows and body in the caller's transaction
/// ```
enum MessageComposer {
    struct Composed: Sendable {
        let outgoing: OutgoingMessage
        let pushes: [OutboxEntry]
        /// The sealed body every push references; nil when each push carries the message.
        let body: SealedBody?
    }

    /// Why a message cannot be sent at all: said at send, nothing stored.
    enum Failure: Error, Equatable, CustomStringConvertible {
        /// The content is over what one body carries.
        case contentTooLarge(bytes: Int)
        /// Too large for one push, and of a type that may not travel by reference.
        case notByReference(contentType: String, pushBytes: Int)
        /// Even the reference's push is over the limit (cannot happen with a valid member).
        case pushTooLarge(bytes: Int)

        var description: String {
            switch self {
            case .contentTooLarge(let bytes):
                return "the message is \(bytes) bytes; at most \(BodySize.maxContentBytes) can be sent"
            case .notByReference(let contentType, let bytes):
                return "a \(contentType) message must fit one push: it needs \(bytes) bytes, the limit is \(PushPayload.maxBytes)"
            case .pushTooLarge(let bytes):
                return "the push would be \(bytes) bytes, the limit is \(PushPayload.maxBytes)"
            }
        }
    }

    static func compose(contentType: String, content: [UInt8], fallback: String?, referenceId: String? = nil,
                        conversation: DBConversation, members: [DBMember], sender: Identity,
                        now: Int64, id: String = Hex.encode(SecureRandom.bytes(16))) throws(Failure) -> Composed {
        let recipients = members.compactMap { member -> (DBMember, PublicKey)? in
            guard member.inboxId != sender.inboxId, let key = try? PublicKey(hex: member.publicKey) else { return nil }
            return (member, key)
        }
        let outgoing = OutgoingMessage(id: id, conversationId: conversation.id, senderInboxId: sender.inboxId,
                                       sentAtMs: now, contentType: contentType, content: content,
                                       fallback: fallback, referenceId: referenceId)
        let signed = SignedMessage.sign(id: id, conversationId: conversation.id, sentAtMs: now,
                                        contentType: contentType, content: content, fallback: fallback,
                                        signer: sender.privateKey)
        let plaintext = signed.encode()
        let largest = recipients.map { inlinePushBytes(plaintext: plaintext.count, member: $0.0, topic: conversation.topic) }.max() ?? 0
        if largest <= PushPayload.maxBytes {
            return Composed(outgoing: outgoing, pushes: seal(plaintext, to: recipients, topic: conversation.topic, body: nil),
                            body: nil)
        }

        guard BodyReference.mayCarry(contentType) else { throw .notByReference(contentType: contentType, pushBytes: largest) }
        guard !content.isEmpty, content.count <= BodySize.maxContentBytes else { throw .contentTooLarge(bytes: content.count) }
        let body = SealedBody.seal(content)
        let reference = BodyReference(body, contentType: contentType,
                                      fallback: fallback.map { prefix($0, bytes: BodyReference.maxFallbackBytes) })
        let outer = SignedMessage.sign(id: id, conversationId: conversation.id, sentAtMs: now,
                                       contentType: ContentType.body, content: reference.encode(),
                                       fallback: BodyReference.outerFallback, signer: sender.privateKey)
        let pushes = seal(outer.encode(), to: recipients, topic: conversation.topic, body: reference.hint)
        if let over = pushes.map(\.payload.count).max(), over > PushPayload.maxBytes { throw .pushTooLarge(bytes: over) }
        return Composed(outgoing: outgoing, pushes: pushes, body: body)
    }

    /// One push for a single recipient that is not (yet) a member, e.g. a join request to
    /// an invite's creator.
    static func sealOne(_ signed: SignedMessage, to publicKey: PublicKey, clientId: String, topic: String,
                        endpoint: String) -> [UInt8] {
        let envelope = Envelope.seal(signed.encode(), recipient: publicKey, clientId: clientId, topic: topic)
        return PushPayload(clientId: clientId, topic: visibleTopic(topic, endpoint: endpoint), envelope: envelope).encode()
    }

    /// The topic as the push shows it: omitted for a push through a relay, which is to learn
    /// the mailbox and nothing else (PROTOCOL §2 1.1); the envelope is sealed with it either way.
    static func visibleTopic(_ topic: String, endpoint: String) -> String? {
        MemberEndpoint.isRelay(endpoint) ? nil : topic
    }

    /// The exact size of `member`'s inline push for a plaintext of `plaintext` bytes, without
    /// sealing it: the payload with an empty envelope, plus the envelope's base64url (whose
    /// characters JSON never escapes).
    static func inlinePushBytes(plaintext: Int, member: DBMember, topic: String) -> Int {
        let empty = PushPayload(clientId: member.clientId, topic: visibleTopic(topic, endpoint: member.endpoint), envelope: [])
        let envelope = Envelope.minimumByteCount + plaintext
        return empty.encode().count + (envelope * 4 + 2) / 3
    }

    /// The longest prefix of `text` within `bytes` bytes of UTF-8, cut between characters.
    static func prefix(_ text: String, bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var out = ""
        var count = 0
        for character in text {
            let size = character.utf8.count
            guard count + size <= bytes else { break }
            out.append(character)
            count += size
        }
        return out
    }

    /// Below this many recipients sealing stays on the caller's thread.
    static let parallelSealThreshold = 32

    /// One push per recipient, in the recipients' order. Each seal is two curve
    /// multiplications (~0.25 ms): for 1,000 members the work is spread over the machine's
    /// cores (docs/adr/0041), each core taking every n-th recipient.
    private static func seal(_ plaintext: [UInt8], to recipients: [(DBMember, PublicKey)], topic: String,
                             body: BodyHint?) -> [OutboxEntry] {
        @Sendable func push(_ member: DBMember, _ key: PublicKey) -> OutboxEntry {
            let envelope = Envelope.seal(plaintext, recipient: key, clientId: member.clientId, topic: topic)
            let payload = PushPayload(clientId: member.clientId, topic: visibleTopic(topic, endpoint: member.endpoint),
                                      envelope: envelope, body: body)
            return OutboxEntry(memberInboxId: member.inboxId, endpoint: member.endpoint, clientId: member.clientId,
                               bodyId: body?.id, payload: payload.encode())
        }
        let lanes = min(ProcessInfo.processInfo.activeProcessorCount, 8)
        guard recipients.count >= parallelSealThreshold, lanes > 1 else { return recipients.map(push) }
        let sealed = Mutex([OutboxEntry?](repeating: nil, count: recipients.count))
        DispatchQueue.concurrentPerform(iterations: lanes) { lane in
            let mine = stride(from: lane, to: recipients.count, by: lanes).map { ($0, push(recipients[$0].0, recipients[$0].1)) }
            sealed.withLock { all in for (index, entry) in mine { all[index] = entry } }
        }
        return sealed.withLock { all in all.compactMap { $0 } }
    }
}
