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

    // MARK: Who still needs it (docs/protocol/attachment-relay.md §6)

    /// Where the sender says how many members fetch the file from this relay.
    public static func needSubject(id: String) -> String? {
        ProtocolIds.isId16(id) ? subjectPrefix + id + ".need" : nil
    }

    /// Where one member marks that it has the file whole; `token` is its 32-hex mark
    /// (`AttachmentFetchedMark`), so a member counts once however often it marks.
    public static func fetchedSubject(id: String, token: String) -> String? {
        guard ProtocolIds.isId16(id), ProtocolIds.isId16(token) else { return nil }
        return subjectPrefix + id + ".got." + token
    }

    /// Every member's mark for the attachment `id`.
    static func allFetched(id: String) -> String? {
        ProtocolIds.isId16(id) ? subjectPrefix + id + ".got.*" : nil
    }

    /// The number a `need` message carries: 1 … 999 in decimal ASCII with no sign and no
    /// leading zero; nil for anything else (which never deletes the file).
    public static func need(from bytes: [UInt8]) -> Int? {
        guard (1...3).contains(bytes.count), bytes.allSatisfy({ (0x30...0x39).contains($0) }), bytes[0] != 0x30,
              let count = Int(String(decoding: bytes, as: UTF8.self)), count <= maxNeed else { return nil }
        return count
    }

    /// The largest `need`: every member of the largest conversation but its sender.
    public static let maxNeed = ContentLimits.maxMembers - 1

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
