import DaemonLogging
import DaemonStore
import RelayTransport
import SharedStore
import SottoCrypto
import SottoWire

/// Deletes an exploded conversation's files from the relays its members receive on
/// (docs/protocol/attachment-relay.md §6, docs/adr/0078): every piece of every file any
/// message of it names, sent or received, purged on the conversation's own connection to each
/// relay (docs/adr/0044). What to purge is read while the rows and their keys are still here;
/// the purge runs after the explode's commit. A relay that cannot be reached keeps the pieces
/// until they expire (30 days): unreadable, since every key was in the rows just deleted.
///
/// ```swift
/// let files = try database.read { conn in try RelayAttachmentPurge.files(of: conversationIds, on: conn) }
/// // … the explode deletes the rows and wipes the keys …
/// await purge.purge(files)
/// ```
struct RelayAttachmentPurge: Sendable {
    /// One conversation's files and the relays they are on.
    struct Files: Sendable, Equatable {
        let conversationId: String
        let attachmentIds: [String]
        let relays: [RelayURL]
    }

    let relays: RelayConnections

    /// The attachment ids the conversations' messages name and the relays among their
    /// members' endpoints; conversations with neither are left out. A reference that does not
    /// open is skipped (its file, if any, expires).
    static func files(of conversationIds: [String], on conn: SQLiteConnection) throws(StoreError) -> [Files] {
        var out: [Files] = []
        for conversationId in conversationIds {
            var attachmentIds: [String] = []
            for messageId in try AttachmentMessageRepository.messageIds(conversationId: conversationId, on: conn) {
                guard let row = try MessageRowRepository.find(id: messageId, on: conn), !row.isUnreadable,
                      case .attachment(let reference)? = try? MessageContent.decode(contentType: row.contentType, content: row.content,
                                                                                     fallback: row.fallback) else { continue }
                let id = Hex.encode(reference.id)
                if !attachmentIds.contains(id) { attachmentIds.append(id) }
            }
            guard !attachmentIds.isEmpty else { continue }
            var urls: [RelayURL] = []
            for member in try MemberRepository.members(of: conversationId, on: conn) where MemberEndpoint.isRelay(member.endpoint) {
                if let url = try? RelayURL.parse(member.endpoint), !urls.contains(url) { urls.append(url) }
            }
            if !urls.isEmpty { out.append(Files(conversationId: conversationId, attachmentIds: attachmentIds, relays: urls)) }
        }
        return out
    }

    /// Purges every file from every relay, off the cooperative pool; returns how many
    /// (file, relay) pairs were purged. A failure is logged and the rest go on.
    @discardableResult
    func purge(_ files: [Files]) async -> Int {
        guard !files.isEmpty else { return 0 }
        let relays = relays
        return await BlockingDelivery.run {
            var purged = 0
            for conversation in files {
                for url in conversation.relays {
                    do throws(RelayError) {
                        let connection = try relays.connection(to: url, for: RelaySender(conversationId: conversation.conversationId))
                        for id in conversation.attachmentIds {
                            try connection.deleteAttachment(id: id)
                            purged += 1
                        }
                    } catch {
                        DaemonLog.warning("an exploded conversation's files stay on relay \(url) until they expire (30 days): \(error)")
                    }
                }
            }
            return purged
        }
    }
}
