import DaemonLogging
import DaemonStore
import Glibc
import RelayTransport
import SharedStore
import SottoCrypto
import SottoWire

/// One incoming attachment's stored file and where it comes from: the relay this device
/// receives the conversation on (its own member entry's endpoint, docs/adr/0078), or, for a
/// device that receives on a direct endpoint, the relay the sender receives on, where it put
/// the file too, or else the sender's device (docs/adr/0079) and then every other member's
/// device on a direct endpoint, any of which may hold it whole (docs/adr/0081). `fetch` runs on a blocking thread: it fills `.<messageId>.partial`, each
/// piece checked before it is written, checks the digest of the whole, then fsyncs and
/// renames it to its final name.
///
/// ```swift
/// if case .found(let source) = AttachmentSource.find(messageId: id, database: database, store: store) {
///     let result = source.fetch(over: relays) { bytesDone in print(bytesDone) }   // .whole
/// }
/// ```
struct AttachmentSource: Sendable {
    /// Where the pieces come from.
    enum Origin: Sendable, Equatable {
        /// The relay's attachment stream (docs/protocol/attachment-relay.md §5).
        case relay(RelayURL)
        /// Members' devices on their `unix:` or `tcp:` endpoints, asked in this order until one
        /// gives the file whole: the sender's first when it is still a member
        /// (docs/protocol/attachment-direct.md), then each other member's (docs/adr/0081).
        case devices([MemberDevice])
    }

    /// One member's device that may serve the file.
    struct MemberDevice: Sendable, Equatable {
        let endpoint: String
        let isSender: Bool
        /// What the log and a failure call it.
        var name: String { isSender ? "the sender's device" : "a member's device" }
    }

    let messageId: String
    let conversationId: String
    let reference: AttachmentReference
    let origin: Origin
    /// This device's member key in the conversation (hex), for its mark on the relay.
    let fetcherPublicKey: String
    let store: AttachmentStore

    // MARK: Finding it

    enum Lookup: Sendable {
        case found(AttachmentSource)
        /// No such message, not an attachment, or its content does not open.
        case notFound
        /// The stored file is here already (fetched before, or this device sent it).
        case alreadyHere
        /// Nothing can bring it to this device.
        case notCarried(String)
        /// The database could not be read: it may pass.
        case unreadable(String)
    }

    static func find(messageId: String, database: DaemonDatabase, store: AttachmentStore) -> Lookup {
        do {
            return try database.read { conn throws(StoreError) -> Lookup in
                guard let row = try MessageRowRepository.find(id: messageId, on: conn), !row.isUnreadable,
                      case .attachment(let reference)? = try? MessageContent.decode(contentType: row.contentType, content: row.content,
                                                                                     fallback: row.fallback) else { return .notFound }
                let stored = access(store.storedPath(conversationId: row.conversationId, messageId: messageId), F_OK) == 0
                if row.isOutgoing { return stored ? .alreadyHere : .notFound }
                if stored, row.transfer?.state == .available { return .alreadyHere }
                guard let conversation = try ConversationRepository.find(id: row.conversationId, on: conn) else { return .notFound }
                let members = try MemberRepository.members(of: row.conversationId, on: conn)
                guard let me = members.first(where: { $0.inboxId == conversation.inboxId }) else { return .notFound }
                let sender = members.first(where: { $0.inboxId == row.senderInboxId })
                let others = members.filter { $0.inboxId != me.inboxId && $0.inboxId != row.senderInboxId }.map(\.endpoint)
                let origin: Origin
                switch Self.origin(memberEndpoint: me.endpoint, senderEndpoint: sender?.endpoint, otherEndpoints: others) {
                case .success(let found): origin = found
                case .failure(let notCarried): return .notCarried(notCarried.reason)
                }
                return .found(AttachmentSource(messageId: messageId, conversationId: row.conversationId, reference: reference,
                                               origin: origin, fetcherPublicKey: me.publicKey, store: store))
            }
        } catch {
            return .unreadable("the database: \(error)")
        }
    }

    // MARK: Where each member fetches from (docs/protocol/attachment-relay.md §5.1)

    struct NotCarried: Error, Equatable {
        let reason: String
    }

    /// Where a member whose own entry's endpoint is `memberEndpoint` fetches a file sent by the
    /// member on `senderEndpoint` (nil: no longer a member): its own relay; on a direct
    /// endpoint, the sender's relay, or else the devices on direct endpoints among the sender's
    /// and `otherEndpoints` (the other members'), the sender's first. The one rule for the
    /// fetcher and for the sender, which puts the file on the relays members will look on.
    static func origin(memberEndpoint: String, senderEndpoint: String?, otherEndpoints: [String] = []) -> Swift.Result<Origin, NotCarried> {
        if MemberEndpoint.isRelay(memberEndpoint) {
            guard let url = try? RelayURL.parse(memberEndpoint) else { return .failure(NotCarried(reason: "this device's relay \(memberEndpoint) is not a relay URL")) }
            return .success(.relay(url))
        }
        if let senderEndpoint, MemberEndpoint.isRelay(senderEndpoint) {
            guard let url = try? RelayURL.parse(senderEndpoint) else { return .failure(NotCarried(reason: "the sender's relay \(senderEndpoint) is not a relay URL")) }
            return .success(.relay(url))
        }
        let devices = (senderEndpoint.map { [MemberDevice(endpoint: $0, isSender: true)] } ?? [])
            + otherEndpoints.filter { !MemberEndpoint.isRelay($0) }.map { MemberDevice(endpoint: $0, isSender: false) }
        guard !devices.isEmpty else {
            return .failure(NotCarried(reason: "its sender is no longer a member, and no other member's device receives on a direct endpoint"))
        }
        return .success(.devices(devices))
    }

    /// The relays the sender `senderInboxId` puts a file on, each with how many of the other
    /// `members` will fetch it there (by `origin`), in the members' order. A relay nobody
    /// fetches from gets nothing.
    static func fetchersByRelay(members: [DBMember], senderInboxId: String) -> [(relay: RelayURL, fetchers: Int)] {
        let senderEndpoint = members.first(where: { $0.inboxId == senderInboxId })?.endpoint
        var out: [(relay: RelayURL, fetchers: Int)] = []
        for member in members where member.inboxId != senderInboxId {
            guard case .success(.relay(let url)) = origin(memberEndpoint: member.endpoint, senderEndpoint: senderEndpoint) else { continue }
            if let index = out.firstIndex(where: { $0.relay == url }) { out[index].fetchers += 1 } else { out.append((url, 1)) }
        }
        return out
    }

    // MARK: Fetching it

    enum Result: Sendable {
        /// Whole, checked, under its final name.
        case whole
        /// It cannot succeed with these bytes (a piece missing or refused, the digest).
        case final(String)
        /// It may succeed later (the relay, the disk).
        case mayPass(String)
    }

    /// Fetches the stored file, resuming from the partial file's last whole piece; tells
    /// `progress` the bytes here and checked every 5 % (at least every 16 pieces).
    func fetch(over relays: RelayConnections, progress: (Int) -> Void) -> Result {
        let directory: String
        do { directory = try store.group.createAttachmentsDirectory(conversationId: conversationId) } catch {
            return .mayPass("the attachments directory: \(error)")
        }
        let partial = store.partialPath(conversationId: conversationId, messageId: messageId)
        let fd = open(partial, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return .mayPass("cannot open \(partial): \(String(cString: strerror(errno)))") }
        var open = true
        defer { if open { close(fd) } }

        var decryptor = AttachmentDecryptor(reference)
        let length = reference.length
        let step = max(16, (AttachmentPieces.count(storedLength: length) ?? 0) / 20)
        let check: (Int, [UInt8]) throws -> Void = { _, piece in try decryptor.consume(piece) { _ in } }
        let reportProgress: (Int, Int) -> Void = { done, total in
            CrashPoint.reach("attachment.piece")  // `attachment.piece@N`: after N pieces
            if done < total, done % step == 0 {
                progress(AttachmentPieces.range(done - 1, storedLength: length).upperBound)
            }
        }
        do throws(AttachmentTransferFailure) {
            switch origin {
            case .relay(let relay):
                let connection: RelayConnection
                do throws(RelayError) {
                    connection = try relays.connection(to: relay, for: RelaySender(conversationId: conversationId))
                } catch {
                    return .mayPass("the relay: \(error)")
                }
                guard connection.isConnected else { return .mayPass("the relay is reconnecting") }
                try RelayAttachmentTransfer.fetch(id: Hex.encode(reference.id), storedLength: length, over: connection, into: fd,
                                                  check: check, progress: reportProgress)
            case .devices(let devices):
                // Each device in turn until one gives the rest whole; the checked pieces on disk stay
                // whoever gave them, so the next resumes there. Only the local disk stops the round.
                var failures: [AttachmentTransferFailure] = []
                var whole = false
                for device in devices where !whole {
                    decryptor = AttachmentDecryptor(reference)  // the pieces on disk are checked again from the first
                    let reader = EndpointPieceReader(endpoint: device.endpoint, device: device.name, messageId: messageId,
                                                     attachmentId: Hex.encode(reference.id), storedLength: length)
                    defer { reader.close() }
                    do throws(AttachmentTransferFailure) {
                        try PartialAttachmentFile.fill(fd, storedLength: length, piece: reader.piece, check: check, progress: reportProgress)
                        whole = true
                    } catch {
                        if case .io = error { throw error }
                        failures.append(error)
                        if devices.count > 1 {
                            DaemonLog.info("attachment of message \(messageId.prefix(8)): \(error.description)"
                                           + (device != devices.last ? "; asking the next member's device" : ""))
                        }
                    }
                }
                // What may pass says it may; otherwise the first device's reason (the sender's, when it is a member).
                if !whole, let failure = failures.first(where: \.isTransient) ?? failures.first { throw failure }
            }
        } catch {
            return error.isTransient ? .mayPass(error.description) : .final(error.description)
        }
        do { try decryptor.finish() } catch { return .final("the file is not the one its message names (\(error))") }
        guard fsync(fd) == 0 else { return .mayPass("fsync of \(partial): \(String(cString: strerror(errno)))") }
        close(fd)
        open = false
        let final = store.storedPath(conversationId: conversationId, messageId: messageId)
        guard rename(partial, final) == 0 else { return .mayPass("rename to \(final): \(String(cString: strerror(errno)))") }
        if let why = DirectorySync.fsync(directory) { return .mayPass(why) }
        return .whole
    }

    // MARK: Once it is here (docs/protocol/attachment-relay.md §6)

    /// What `release` did on the relay the file came from.
    struct Released: Sendable {
        let relay: String
        let outcome: Swift.Result<RelayAttachmentTransfer.Release, RelayError>
    }

    /// Marks the file fetched on the relay it came from, which deletes it there when this
    /// device was the last member to need it (`RelayAttachmentTransfer.release`); nil for a
    /// file from a member's device (nothing to tell a relay). Blocking.
    func release(over relays: RelayConnections) -> Released? {
        guard case .relay(let url) = origin else { return nil }
        guard let token = AttachmentFetchedMark.token(key: reference.key, memberPublicKey: Hex.decode(fetcherPublicKey, count: 33) ?? []) else {
            return Released(relay: url.description, outcome: .failure(.call(operation: "mark an attachment fetched",
                                                                             status: "this device's member key is not a compressed public key", code: 0)))
        }
        do throws(RelayError) {
            let connection = try relays.connection(to: url, for: RelaySender(conversationId: conversationId))
            return Released(relay: url.description,
                            outcome: .success(try RelayAttachmentTransfer.release(id: Hex.encode(reference.id), token: token, over: connection)))
        } catch {
            return Released(relay: url.description, outcome: .failure(error))
        }
    }
}
