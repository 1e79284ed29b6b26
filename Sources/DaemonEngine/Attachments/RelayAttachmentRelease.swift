import DaemonLogging
import DaemonStore
import RelayTransport
import SharedStore

/// What a device that leaves a conversation, or is removed from it, tells the relays about the
/// files it was to fetch and never did: it needs them no more, so it marks each as a member
/// that fetched it does (docs/protocol/attachment-relay.md §6.1, docs/adr/0080), and the
/// others' fetches can still be the last. Nothing is purged outright: the others may still
/// need the files. Read while the rows are here; told once they are deleted.
///
/// ```swift
/// let unfetched = RelayAttachmentRelease.unfetched(of: conversationIds, database: database, store: attachments)
/// // … the leave deletes the rows and wipes the keys …
/// await release.release(unfetched)
/// ```
struct RelayAttachmentRelease: Sendable {
    let relays: RelayConnections

    /// The incoming files of `conversationIds` this device does not have, each with where it
    /// would have come from. A file it has was marked when it arrived.
    static func unfetched(of conversationIds: [String], database: DaemonDatabase, store: AttachmentStore) -> [AttachmentSource] {
        var out: [AttachmentSource] = []
        for conversationId in conversationIds {
            let messageIds = (try? database.read { conn in try AttachmentMessageRepository.messageIds(conversationId: conversationId, on: conn) }) ?? []
            for messageId in messageIds {
                if case .found(let source) = AttachmentSource.find(messageId: messageId, database: database, store: store) { out.append(source) }
            }
        }
        return out
    }

    /// Marks each file on its relay, off the cooperative pool; returns how many it marked and
    /// how many of those the relay then deleted (this device was the last that needed them).
    @discardableResult
    func release(_ sources: [AttachmentSource]) async -> (marked: Int, deleted: Int) {
        guard !sources.isEmpty else { return (0, 0) }
        let relays = relays
        return await BlockingDelivery.run {
            var marked = 0, deleted = 0
            for source in sources {
                guard let released = source.release(over: relays) else { continue }
                switch released.outcome {
                case .success(.deleted): marked += 1; deleted += 1
                case .success(.kept): marked += 1
                case .failure(let error):
                    DaemonLog.warning("a file this device never fetched stays on relay \(released.relay) until the others have it or its age limit: \(error)")
                }
            }
            return (marked, deleted)
        }
    }
}
