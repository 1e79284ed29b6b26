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

    /// Puts the stored file at `storedPath` on every relay among `endpoints` before any push
    /// names it: each piece the relay does not hold yet, each acked, on the sending
    /// conversation's own connection to that relay (docs/adr/0044). Blocking work runs on a
    /// delivery lane, not the cooperative pool. Direct endpoints need nothing here.
    ///
    /// ```swift
    /// try await outbox.putAttachmentOnRelays(storedPath: path, reference: reference,
    ///                                        endpoints: members.map(\.endpoint), conversationId: id)
    /// ```
    nonisolated func putAttachmentOnRelays(storedPath: String, reference: AttachmentReference, endpoints: [String],
                                           conversationId: String) async throws(RelayUploadFailure) {
        var relaysToUse: [RelayURL] = []
        for endpoint in endpoints where MemberEndpoint.isRelay(endpoint) {
            guard let url = try? RelayURL.parse(endpoint) else { continue }  // the push to it fails on its own
            if !relaysToUse.contains(url) { relaysToUse.append(url) }
        }
        let id = Hex.encode(reference.id), length = reference.length
        for url in relaysToUse {
            let relays = self.relays
            let failure: RelayUploadFailure? = await BlockingDelivery.run {
                Self.upload(storedPath: storedPath, id: id, length: length, to: url,
                            sender: RelaySender(conversationId: conversationId), via: relays)
            }
            if let failure { throw failure }
        }
    }

    private static func upload(storedPath: String, id: String, length: Int, to url: RelayURL, sender: RelaySender,
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
            CrashPoint.reach("attachment.uploaded")  // on the relay, no push names it yet
            return nil
        } catch {
            return RelayUploadFailure(relay: url.description, reason: error.description)
        }
    }
}
