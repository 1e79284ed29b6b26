import DaemonLogging
import Glibc
import RelayTransport
import SottoWire

// MARK: - A sent file on its members' relays (docs/protocol/attachment-relay.md §4, docs/adr/0076)

extension OutboxSender {
    /// Why a sent file could not be put on a relay; nothing was sent.
    public struct RelayUploadFailure: Error, Sendable, CustomStringConvertible {
        public let relay: String
        public let reason: String
        public var description: String { "relay \(relay) did not take the file (\(reason)); nothing was sent" }
    }

    /// Puts the stored file at `storedPath` on each relay of `fetchersByRelay` before any
    /// push names it: each piece the relay does not hold yet, each acked, then how many members
    /// fetch it there (its `need`, which lets the last of them delete it), on the sending
    /// conversation's own connection to that relay (docs/adr/0044). Blocking work runs on a
    /// delivery lane, not the cooperative pool. Members who fetch from the sender's device need
    /// nothing here. When a relay refuses (full, or gone), what was already put on it and on
    /// the relays before it is deleted again: the send is refused, and no relay keeps half a
    /// file nobody will name.
    ///
    /// ```swift
    /// try await outbox.putAttachmentOnRelays(storedPath: path, reference: reference,
    ///                                        fetchersByRelay: AttachmentSource.fetchersByRelay(members: members, senderInboxId: me),
    ///                                        conversationId: id)
    /// ```
    nonisolated func putAttachmentOnRelays(storedPath: String, reference: AttachmentReference,
                                           fetchersByRelay: [(relay: RelayURL, fetchers: Int)],
                                           conversationId: String) async throws(RelayUploadFailure) {
        let id = Hex.encode(reference.id), length = reference.length
        let sender = RelaySender(conversationId: conversationId), relays = self.relays
        for (index, (url, fetchers)) in fetchersByRelay.enumerated() {
            let failure: RelayUploadFailure? = await BlockingDelivery.run {
                Self.upload(storedPath: storedPath, id: id, length: length, fetchers: fetchers, to: url, sender: sender, via: relays)
            }
            if let failure {
                let tried = fetchersByRelay[...index].map(\.relay)
                await BlockingDelivery.run { Self.withdraw(id: id, from: tried, sender: sender, via: relays) }
                throw failure
            }
        }
    }

    /// Deletes what went up of a file whose send was refused; a relay that cannot be asked
    /// keeps those pieces until they expire (30 days), unreadable (the key was never sent).
    private static func withdraw(id: String, from urls: [RelayURL], sender: RelaySender, via relays: RelayConnections) {
        for url in urls {
            do throws(RelayError) {
                try relays.connection(to: url, for: sender).deleteAttachment(id: id)
            } catch {
                DaemonLog.warning("the pieces of a refused file stay on relay \(url) until they expire (30 days): \(error)")
            }
        }
    }

    private static func upload(storedPath: String, id: String, length: Int, fetchers: Int, to url: RelayURL, sender: RelaySender,
                               via relays: RelayConnections) -> RelayUploadFailure? {
        let fd = open(storedPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return RelayUploadFailure(relay: url.description, reason: "the stored file: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let connection: RelayConnection
        do throws(RelayError) {
            connection = try relays.connection(to: url, for: sender)
            guard connection.isConnected else { return RelayUploadFailure(relay: url.description, reason: "it is reconnecting") }
            try connection.ensureAttachmentStream()
        } catch {
            return RelayUploadFailure(relay: url.description, reason: error.description)
        }
        do throws(RelayAttachmentTransfer.Failure) {
            try RelayAttachmentTransfer.upload(from: fd, storedLength: length, id: id, over: connection)
        } catch {
            return RelayUploadFailure(relay: url.description, reason: error.description)
        }
        if fetchers > AttachmentStream.maxNeed {
            // More than a roster holds (attachment-relay.md §4 step 3): no count, so the file waits for its age limit.
            DaemonLog.warning("\(fetchers) members fetch a file from relay \(url), more than a need can say; it stays there until its age limit")
        } else {
            do throws(RelayError) {
                try connection.publishAttachmentNeed(id: id, count: fetchers)
            } catch {
                return RelayUploadFailure(relay: url.description, reason: error.description)
            }
        }
        CrashPoint.reach("attachment.uploaded")  // on the relay with its need, no push names it yet
        return nil
    }
}
