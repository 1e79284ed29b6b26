/// Why moving a stored attachment file `S` between this device and a relay or another
/// device's endpoint stopped (docs/protocol/attachment-relay.md §5, attachment-direct.md §4).
/// `unreachable` and `io` may pass (try again later, from the last whole piece); the others are
/// final for these stored bytes.
///
/// ```swift
/// do throws(AttachmentTransferFailure) { try PartialAttachmentFile.fill(fd, storedLength: n, piece: get, check: check) }
/// catch { error.isTransient ? retryLater(error.description) : markFailed(error.description) }
/// ```
public enum AttachmentTransferFailure: Error, Equatable, CustomStringConvertible {
    /// Where the pieces come from could not be asked, or stopped answering: try again later.
    case unreachable(String)
    /// The local file could not be read or written.
    case io(String)
    /// `storedLength` is not the length of any stored file (0 … 100 MiB).
    case notAStoredLength(Int)
    /// The relay holds no such piece: expired, deleted, or its sender never finished.
    case missingPiece(Int)
    /// The device asked does not serve the file: it does not hold it (`unknown_attachment`),
    /// refused the request, or does not speak the exchange (docs/protocol/attachment-direct.md).
    case notServed(String)
    /// A piece is not the size the stored length says it is.
    case wrongPieceLength(piece: Int, length: Int, expected: Int)
    /// The caller's check refused the piece (a tag that does not verify, a digest).
    case refused(piece: Int, reason: String)

    public var description: String {
        switch self {
        case .unreachable(let why): return why
        case .io(let what): return "the local file: \(what)"
        case .notAStoredLength(let length): return "\(length) bytes is not the length of a stored attachment"
        case .missingPiece(let piece): return "the relay does not hold piece \(piece) (expired, deleted or never finished)"
        case .notServed(let why): return why
        case .wrongPieceLength(let piece, let length, let expected):
            return "piece \(piece) is \(length) bytes, not \(expected)"
        case .refused(let piece, let reason): return "piece \(piece) refused: \(reason)"
        }
    }

    /// Whether the same transfer may succeed later.
    public var isTransient: Bool {
        switch self {
        case .unreachable, .io: return true
        case .notAStoredLength, .missingPiece, .notServed, .wrongPieceLength, .refused: return false
        }
    }
}
