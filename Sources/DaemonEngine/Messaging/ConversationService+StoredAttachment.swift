import DaemonStore
import Glibc
import SharedStore
import SottoCrypto
import SottoWire

// MARK: - The stored file a message carries (docs/protocol/attachments.md "Saving", docs/adr/0077)

extension ConversationService {
    /// A message's stored file and the reference that opens it: what `saveAttachment` reads.
    ///
    /// ```swift
    /// let stored = try await service.storedAttachment(message: "3fa2")
    /// stored.path                 // <group>/attachments/<conversationId>/<messageId>
    /// stored.reference.size       // the file's bytes
    /// ```
    public struct StoredAttachment: Sendable {
        public let messageId: String
        public let conversationId: String
        public let path: String
        public let reference: AttachmentReference
    }

    /// The one place that says whether a message's file can be read on this device, and
    /// where it is. `message` is a message id or a prefix of one unique among all
    /// conversations. Throws `notFound` (no such message, or a prefix of several),
    /// `invalid` (not a hex id, or the message is not a file), `refused` (the file is not on
    /// this device: a recipient's, until it is fetched; or its stored file is gone).
    ///
    /// A recipient's file is read once its stored file is under its final name (the fetcher
    /// writes it whole and checked first, as the sender does: docs/adr/0078). One that is not
    /// here yet is fetched now, whatever its size, and waited for; a fetch that fails is
    /// `refused` with its reason.
    public func storedAttachment(message reference: String) async throws -> StoredAttachment {
        guard !reference.isEmpty, reference.utf8.count <= 32, reference.utf8.allSatisfy(Hex.isDigit) else {
            throw Failure.invalid("'\(reference)' is not a message id (1 to 32 hex digits)")
        }
        let found = try database.read { conn in
            try MessageIdRepository.messages(prefix: reference.lowercased(), limit: 2, on: conn)
        }
        guard found.count == 1, let (messageId, conversationId) = found.first.map({ ($0.id, $0.conversationId) }) else {
            throw found.isEmpty ? Failure.missing("no message matches '\(reference)'")
                                : Failure.missing("'\(reference)' matches more than one message; give more of the id")
        }
        let conversation = try conversation(conversationId)
        // Its content is sealed with the conversation's key, held while its inbox is awake (docs/adr/0052).
        _ = try await inboxLRU.wake(conversation.inboxId, reason: .userInteraction)
        let row = try database.read { conn in try MessageRowRepository.find(id: messageId, on: conn) }
        guard let row else { throw Failure.missing("no message matches '\(reference)'") }
        guard !row.isUnreadable else {
            throw Failure.refused("message \(messageId) cannot be opened: its conversation's key is gone or the row was altered")
        }
        guard row.contentType == ContentType.attachment,
              case .attachment(let attachment)? = try? MessageContent.decode(contentType: row.contentType, content: row.content,
                                                                             fallback: row.fallback) else {
            throw Failure.invalid("message \(messageId) is not a file (its type is \(row.contentType))")
        }
        let path = attachments.storedPath(conversationId: conversationId, messageId: messageId)
        if access(path, F_OK) != 0 || (!row.isOutgoing && row.transfer?.state != .available) {
            guard !row.isOutgoing else {
                throw Failure.refused("this device's stored copy of the file is missing (\(path)); it cannot be saved")
            }
            switch await attachmentFetcher.fetch(messageId: messageId) {
            case .available: break
            case .failed(let reason): throw Failure.refused("the file could not be fetched: \(reason)")
            case .notCarried(let reason): throw Failure.refused("the file has not arrived on this device (waiting): \(reason)")
            case .notFound: throw Failure.missing("no message matches '\(reference)'")
            }
        }
        return StoredAttachment(messageId: messageId, conversationId: conversationId, path: path, reference: attachment)
    }
}
