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
    /// Why a transfer stopped. `relay` and `io` may pass (try again later); the others are final
    /// for these stored bytes.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// The relay could not be asked, or refused a call: try again later.
        case relay(RelayError)
        /// The local file could not be read or written.
        case io(String)
        /// `storedLength` is not the length of any stored file (0 … 100 MiB).
        case notAStoredLength(Int)
        /// The relay holds no such piece: expired, deleted, or its sender never finished.
        case missingPiece(Int)
        /// The relay's piece is not the size the stored length says it is.
        case wrongPieceLength(piece: Int, length: Int, expected: Int)
        /// The caller's check refused the piece (a tag that does not verify, a digest).
        case refused(piece: Int, reason: String)

        public var description: String {
            switch self {
            case .relay(let error): return "the relay: \(error)"
            case .io(let what): return "the local file: \(what)"
            case .notAStoredLength(let length): return "\(length) bytes is not the length of a stored attachment"
            case .missingPiece(let piece): return "the relay does not hold piece \(piece) (expired, deleted or never finished)"
            case .wrongPieceLength(let piece, let length, let expected):
                return "piece \(piece) is \(length) bytes, not \(expected)"
            case .refused(let piece, let reason): return "piece \(piece) refused: \(reason)"
            }
        }

        /// Whether the same transfer may succeed later.
        public var isTransient: Bool {
            switch self {
            case .relay, .io: return true
            case .notAStoredLength, .missingPiece, .wrongPieceLength, .refused: return false
            }
        }
    }

    // MARK: Sending

    /// Publishes every piece of the stored file open on `fd` that the relay does not hold yet,
    /// in order, each waiting for its ack; pieces already there (a transfer cut before) are
    /// skipped without being read. Returns the number of pieces published. `progress` gets
    /// (pieces on the relay, pieces in all) after each one; throwing from it stops the upload.
    @discardableResult
    public static func upload(from fd: Int32, storedLength: Int, id: String, over relay: RelayConnection,
                              progress: (Int, Int) throws -> Void = { _, _ in }) throws(Failure) -> Int {
        guard let pieces = AttachmentStream.pieceCount(storedLength: storedLength) else { throw .notAStoredLength(storedLength) }
        guard AttachmentStream.allPieces(id: id) != nil else { throw .relay(.call(operation: "upload an attachment", status: "not an attachment id", code: 0)) }
        let held: Set<Int>
        do { held = try relay.storedAttachmentPieces(id: id) } catch { throw .relay(error) }
        var published = 0
        var done = held.count(where: { $0 < pieces })
        for piece in 0..<pieces where !held.contains(piece) {
            let bytes = try read(fd, AttachmentStream.pieceRange(piece, storedLength: storedLength))
            do { try relay.publishAttachmentPiece(bytes, id: id, piece: piece) } catch { throw .relay(error) }
            published += 1
            done += 1
            do { try progress(done, pieces) } catch { throw .io("stopped: \(error)") }
        }
        return published
    }

    // MARK: Receiving

    /// Fills the partial file open on `fd` (read and write) with `S`, piece by piece: first the
    /// whole pieces it already holds are read back and given to `check` (a torn piece at its
    /// end is cut off), then each missing piece is fetched, given to `check`, and written. So
    /// `check` sees every piece of `S` once, in order, and nothing it refused is written.
    /// Returns the piece the fetch resumed at. The caller makes the file the file (fsync,
    /// rename) only after its own last check; after a final failure it deletes it.
    @discardableResult
    public static func fetch(id: String, storedLength: Int, over relay: RelayConnection, into fd: Int32,
                             check: (Int, [UInt8]) throws -> Void,
                             progress: (Int, Int) -> Void = { _, _ in }) throws(Failure) -> Int {
        guard let pieces = AttachmentStream.pieceCount(storedLength: storedLength) else { throw .notAStoredLength(storedLength) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .io("fstat: \(String(cString: strerror(errno)))") }
        let already = Int(status.st_size)
        var resumeAt = 0
        while resumeAt < pieces, AttachmentStream.pieceRange(resumeAt, storedLength: storedLength).upperBound <= already { resumeAt += 1 }
        let whole = resumeAt == 0 ? 0 : AttachmentStream.pieceRange(resumeAt - 1, storedLength: storedLength).upperBound
        if already != whole { guard ftruncate(fd, off_t(whole)) == 0 else { throw .io("ftruncate: \(String(cString: strerror(errno)))") } }

        for piece in 0..<pieces {
            let range = AttachmentStream.pieceRange(piece, storedLength: storedLength)
            let bytes: [UInt8]
            if piece < resumeAt {
                bytes = try read(fd, range)
            } else {
                let fetched: [UInt8]?
                do { fetched = try relay.attachmentPiece(id: id, piece: piece) } catch { throw .relay(error) }
                guard let fetched else { throw .missingPiece(piece) }
                guard fetched.count == range.count else { throw .wrongPieceLength(piece: piece, length: fetched.count, expected: range.count) }
                bytes = fetched
            }
            do { try check(piece, bytes) } catch { throw .refused(piece: piece, reason: String(describing: error)) }
            if piece >= resumeAt { try write(fd, bytes, at: range.lowerBound) }
            progress(piece + 1, pieces)
        }
        return resumeAt
    }

    // MARK: The local file

    private static func read(_ fd: Int32, _ range: Range<Int>) throws(Failure) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: range.count)
        var done = 0
        while done < range.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                pread(fd, buffer.baseAddress! + done, range.count - done, off_t(range.lowerBound + done))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw .io(count == 0 ? "the file ends at \(range.lowerBound + done), before \(range.upperBound)" : "read: \(String(cString: strerror(errno)))")
            }
            done += count
        }
        return bytes
    }

    private static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int) throws(Failure) {
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                pwrite(fd, buffer.baseAddress! + done, bytes.count - done, off_t(offset + done))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw .io("write: \(String(cString: strerror(errno)))") }
            done += count
        }
    }
}
