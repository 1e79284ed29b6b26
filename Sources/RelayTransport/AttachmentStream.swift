import SottoWire

/// The one definition of the attachment stream `SOTTO_ATTACHMENTS`
/// (docs/protocol/attachment-relay.md): a stored attachment file `S` kept once on a relay for
/// every member, as one message per *piece* under `sotto.att.<attachment id>.<piece index>`.
/// Piece `i` is exactly chunk `i` of `S` as stored (the header travels with piece 0), so each
/// piece is checked on its own as it arrives. At most one message per subject, a second
/// publish refused by the relay (discard-new-per-subject): nobody who learns the id can replace
/// a piece. Limits retention with the mailboxes' 30-day age.
///
/// ```swift
/// AttachmentStream.pieceCount(storedLength: 104_883_208)       // 1,600
/// AttachmentStream.pieceRange(0, storedLength: 4_120)          // 0..<4120: header and chunk 0
/// AttachmentStream.subject(id: reference.id, piece: 3)          // "sotto.att.<id>.3"
/// ```
public struct AttachmentStream: Sendable, Equatable {
    public static let streamName = "SOTTO_ATTACHMENTS"
    public static let subjectPrefix = "sotto.att."
    public static let allSubjects = "sotto.att.>"
    /// The largest piece (header and a full chunk, 65,560 bytes) and room for its headers.
    public static let maxMessageBytes: Int32 = 65_560 + 1_024

    public var replicas: Int
    public var maxAgeMs: Int64

    public init(replicas: Int = 1, maxAgeMs: Int64 = MailboxStream.defaultMaxAgeMs) {
        self.replicas = replicas
        self.maxAgeMs = maxAgeMs
    }

    // MARK: Subjects

    /// The subject of one piece; nil for anything but an attachment id (32 lowercase hex) and
    /// a piece index in range, so no wildcard or token separator reaches a subject.
    public static func subject(id: String, piece: Int) -> String? {
        guard ProtocolIds.isId16(id), piece >= 0, piece < maxPieces else { return nil }
        return subjectPrefix + id + "." + String(piece)
    }

    /// Every piece of one attachment (for looking them up and for deleting them).
    public static func allPieces(id: String) -> String? {
        ProtocolIds.isId16(id) ? subjectPrefix + id + ".>" : nil
    }

    /// The piece index a stored subject names, for the attachment `id`; nil for any other.
    static func piece(inSubject subject: String, id: String) -> Int? {
        let prefix = subjectPrefix + id + "."
        guard subject.hasPrefix(prefix) else { return nil }
        let digits = subject.dropFirst(prefix.count)
        guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              digits == "0" || digits.first != "0", let index = Int(digits), index < maxPieces else { return nil }
        return index
    }

    // MARK: Pieces of a stored file

    /// A 100 MiB file's chunks.
    public static let maxPieces = AttachmentLayout.chunkCount(AttachmentLayout.maxSize)

    /// Pieces of a stored file of `storedLength` bytes: its chunk count. Nil for a length no
    /// file of 0 … 100 MiB is stored as.
    public static func pieceCount(storedLength: Int) -> Int? {
        guard let size = fileSize(storedLength: storedLength) else { return nil }
        return AttachmentLayout.chunkCount(size)
    }

    /// Where piece `index` lies in `S`: piece 0 is the header and chunk 0, piece `i > 0` is
    /// chunk `i` (`8 + 65,552 × i` on, its stored length).
    public static func pieceRange(_ index: Int, storedLength: Int) -> Range<Int> {
        let chunkStride = AttachmentLayout.chunkSize + AttachmentLayout.tagSize
        let header = AttachmentLayout.header.count
        let start = index == 0 ? 0 : header + chunkStride * index
        let end = min(storedLength, header + chunkStride * (index + 1))
        return start..<end
    }

    /// The file size whose stored length is `storedLength` (the smallest, since a padded size
    /// stands for many file sizes): what the length alone says. Nil when no size fits.
    static func fileSize(storedLength: Int) -> Int? {
        let header = AttachmentLayout.header.count
        let stride = AttachmentLayout.chunkSize + AttachmentLayout.tagSize
        guard storedLength > header, storedLength <= AttachmentLayout.storedLength(AttachmentLayout.maxSize) else { return nil }
        let chunks = (storedLength - header + stride - 1) / stride
        let padded = storedLength - header - AttachmentLayout.tagSize * chunks
        guard padded > 0, padded <= AttachmentLayout.maxSize, AttachmentLayout.paddedSize(padded) == padded,
              AttachmentLayout.storedLength(padded) == storedLength else { return nil }
        return padded
    }
}
