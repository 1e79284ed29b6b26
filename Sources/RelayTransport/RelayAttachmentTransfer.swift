import Glibc
import SottoWire

/// Moves a stored attachment file `S` between a local file and a relay's attachment stream,
/// one piece (one chunk, at most 65,560 bytes) in memory at a time, resuming from the last
/// whole piece (docs/protocol/attachment-relay.md §4, §5).
///
/// ```swift
/// // Sending: every piece the relay does not hold yet, in order, each acked.
/// try RelayAttachmentTransfer.upload(from: fd, storedLength: reference.length, id: reference.id, over: relay)
/// // Receiving: into a partial file, each piece checked before it is written.
/// var decryptor = AttachmentDecryptor(reference)
/// try RelayAttachmentTransfer.fetch(id: reference.id, storedLength: reference.length, over: relay, into: partFd) { _, piece in
///     try decryptor.consume(piece) { _ in }
/// }
/// try decryptor.finish()   // the digest of all of S
/// ```
public enum RelayAttachmentTransfer {
    /// Why a transfer stopped (one type for every transport of a stored file).
    public typealias Failure = AttachmentTransferFailure

    // MARK: Sending

    /// Publishes every piece of the stored file open on `fd` that the relay does not hold yet,
    /// in order, each waiting for its ack; pieces already there (a transfer cut before) are
    /// skipped without being read. Returns the number of pieces published. `progress` gets
    /// (pieces on the relay, pieces in all) after each one; throwing from it stops the upload.
    @discardableResult
    public static func upload(from fd: Int32, storedLength: Int, id: String, over relay: RelayConnection,
                              progress: (Int, Int) throws -> Void = { _, _ in }) throws(Failure) -> Int {
        guard let pieces = AttachmentPieces.count(storedLength: storedLength) else { throw .notAStoredLength(storedLength) }
        guard AttachmentStream.allPieces(id: id) != nil else { throw .unreachable("the relay: \(RelayError.call(operation: "upload an attachment", status: "not an attachment id", code: 0))") }
        let held: Set<Int>
        do { held = try relay.storedAttachmentPieces(id: id) } catch { throw .unreachable("the relay: \(error)") }
        var published = 0
        var done = held.count(where: { $0 < pieces })
        for piece in 0..<pieces where !held.contains(piece) {
            let bytes = try PartialAttachmentFile.read(fd, AttachmentPieces.range(piece, storedLength: storedLength))
            do { try relay.publishAttachmentPiece(bytes, id: id, piece: piece) } catch { throw .unreachable("the relay: \(error)") }
            published += 1
            done += 1
            do { try progress(done, pieces) } catch { throw .io("stopped: \(error)") }
        }
        return published
    }

    // MARK: Receiving

    /// Fills the partial file open on `fd` (read and write) with `S` from the relay, piece by
    /// piece (`PartialAttachmentFile.fill`): the whole pieces it holds are checked again, each
    /// missing one fetched, given to `check`, and written. Returns the piece the fetch resumed at.
    @discardableResult
    public static func fetch(id: String, storedLength: Int, over relay: RelayConnection, into fd: Int32,
                             check: (Int, [UInt8]) throws -> Void,
                             progress: (Int, Int) -> Void = { _, _ in }) throws(Failure) -> Int {
        try PartialAttachmentFile.fill(fd, storedLength: storedLength, piece: { index throws(Failure) in
            do { return try relay.attachmentPiece(id: id, piece: index) } catch { throw .unreachable("the relay: \(error)") }
        }, check: check, progress: progress)
    }

    // MARK: Once every member has it (docs/protocol/attachment-relay.md §6)

    /// What `release` found on the relay.
    public enum Release: Sendable, Equatable {
        /// This member was the last that needed it: every piece, the `need` and the marks are deleted.
        case deleted(fetched: Int)
        /// Others still need it (`need` nil: the relay holds no `need`, so the file waits for its age limit).
        case kept(fetched: Int, need: Int?)
    }

    /// Tells the relay that the member whose mark is `token` has `id` whole, then deletes the
    /// file when as many members have marked it as its sender's `need` says. Each member marks
    /// before it counts, so the last of any members marking together sees every mark. A mark
    /// the relay refuses (its stream full) still counts for this member, so the last member
    /// frees the room even then; a member that is not the last gets the refusal.
    ///
    /// ```swift
    /// try RelayAttachmentTransfer.release(id: id, token: AttachmentFetchedMark.token(key: key, memberPublicKey: me)!, over: relay)
    /// ```
    public static func release(id: String, token: String, over relay: RelayConnection) throws(RelayError) -> Release {
        var refusal: RelayError?
        do { try relay.markAttachmentFetched(id: id, token: token) } catch { refusal = error }
        let fetched: Int, need: Int?
        do {
            fetched = try relay.attachmentFetchedCount(id: id) + (refusal == nil ? 0 : 1)
            need = try relay.attachmentNeed(id: id)
        } catch {
            throw refusal ?? error
        }
        guard let need, fetched >= need else {
            if let refusal { throw refusal }
            return .kept(fetched: fetched, need: need)
        }
        try relay.deleteAttachment(id: id)
        return .deleted(fetched: fetched)
    }
}
