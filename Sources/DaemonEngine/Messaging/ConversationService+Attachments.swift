import SharedStore
import SottoCrypto
import SottoWire

// MARK: - Sending a file (docs/protocol/attachments.md §7, docs/adr/0074)

extension ConversationService {
    /// What `sendAttachment` stored and sent.
    public struct SentAttachmentFile: Sendable, Equatable {
        public let messageId: String
        public let recipients: Int
        public let reference: AttachmentReference
    }

    /// Reads the file at `path` once, stores its encrypted form (`AttachmentStore`), puts it
    /// on every relay a member will fetch it from (`putAttachmentOnRelays`), then
    /// sends a `sotto/attachment:1.0` message with its reference through `sendContent`, like
    /// any message: inline in each member's push when it fits, else by reference. Returns
    /// once both are done; a refusal at any step leaves neither (the file is removed when the
    /// message is not stored, and a crash between the two is swept at the next start).
    ///
    /// ```swift
    /// let sent = try await service.sendAttachment(to: "ab12", path: "/home/ann/a.pdf", name: nil, caption: "minutes")
    /// sent.reference.size   // the file's bytes
    /// ```
    public func sendAttachment(to reference: String, path: String, name: String?, caption: String?) async throws -> SentAttachmentFile {
        guard path.hasPrefix("/") else { throw Failure.invalid("the file's path must be absolute; '\(path)' is not") }
        let fileName = try Self.attachmentName(name ?? Self.lastComponent(of: path), given: name != nil)
        if let caption {
            guard !caption.isEmpty, caption.utf8.count <= AttachmentReference.maxCaptionBytes else {
                throw Failure.invalid("a caption is 1 to \(AttachmentReference.maxCaptionBytes) bytes of UTF-8; this one is \(caption.utf8.count)")
            }
        }
        let conversation = try conversation(reference)
        guard conversation.state == .active else { throw Failure.refused("the conversation is waiting for its creator to accept the join") }
        let messageId = Hex.encode(SecureRandom.bytes(16))
        let stored: AttachmentFile.Encrypted
        do {
            stored = try await attachments.store(path: path, conversationId: conversation.id, messageId: messageId)
        } catch {
            throw Failure.invalid(error.description)
        }
        CrashPoint.reach("attachment.stored")
        let attachment = stored.reference(name: fileName, mediaType: AttachmentMediaType.guess(fileName: fileName), caption: caption)
        do {
            // Every piece on each relay a member fetches from before any push names it (docs/protocol/attachment-relay.md §4).
            let members = try database.read { conn in try MemberRepository.members(of: conversation.id, on: conn) }
            do {
                try await outbox.putAttachmentOnRelays(storedPath: attachments.storedPath(conversationId: conversation.id, messageId: messageId),
                                                       reference: attachment,
                                                       fetchersByRelay: AttachmentSource.fetchersByRelay(members: members, senderInboxId: conversation.inboxId),
                                                       conversationId: conversation.id)
            } catch {
                throw Failure.refused(error.description)
            }
            let sent = try await sendContent(conversation, contentType: ContentType.attachment, content: attachment.encode(),
                                             fallback: AttachmentReference.outerFallback, referenceId: nil, id: messageId)
            return SentAttachmentFile(messageId: sent.messageId, recipients: sent.recipients, reference: attachment)
        } catch {
            attachments.delete(conversationId: conversation.id, messageId: messageId)
            throw error
        }
    }

    /// The name members see: 1 … 1,024 bytes of UTF-8 with no control character (C0, C1,
    /// DEL). A name from the path that breaks this asks for `--name`.
    static func attachmentName(_ name: String, given: Bool) throws -> String {
        let how = given ? "" : " (it is the path's last part; give one with --name)"
        guard (1...AttachmentReference.maxNameBytes).contains(name.utf8.count) else {
            throw Failure.invalid("a file's name is 1 to \(AttachmentReference.maxNameBytes) bytes of UTF-8; this one is \(name.utf8.count)\(how)")
        }
        guard MessageContent.isDisplayable(name) else {
            throw Failure.invalid("a file's name may not contain control characters\(how)")
        }
        return name
    }

    /// `photo.jpg` of `/home/ann/photo.jpg`.
    static func lastComponent(of path: String) -> String {
        String(path.split(separator: "/", omittingEmptySubsequences: true).last ?? "")
    }
}
