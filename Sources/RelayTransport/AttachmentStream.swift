import SottoWire

/// The one definition of the attachment stream `SOTTO_ATTACHMENTS`
/// (docs/protocol/attachment-relay.md): a stored attachment file `S` kept once on a relay for
/// every member, as one message per *piece* under `sotto.att.<attachment id>.<piece index>`.
/// Piece `i` is exactly chunk `i` of `S` as stored (the header travels with piece 0), so each
/// piece is checked on its own as it arrives (`AttachmentPieces`). At most one message per subject, a second
/// publish refused by the relay (discard-new-per-subject): nobody who learns the id can replace
/// a piece. Limits retention with the mailboxes' 30-day age.
///
/// ```swift
/// AttachmentStream.subject(id: reference.id, piece: 3)          // "sotto.att.<id>.3"
/// AttachmentStream.allPieces(id: reference.id)                  // "sotto.att.<id>.>"
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
        guard ProtocolIds.isId16(id), piece >= 0, piece < AttachmentPieces.maxPieces else { return nil }
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
              digits == "0" || digits.first != "0", let index = Int(digits), index < AttachmentPieces.maxPieces else { return nil }
        return index
    }
}
