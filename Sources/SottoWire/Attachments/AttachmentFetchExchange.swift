/// The fetch of a stored attachment file `S` from another device's endpoint
/// (docs/protocol/attachment-direct.md): on a new connection to the endpoint's stream socket
/// (the push socket, PROTOCOL §2) the fetcher writes one request line; the endpoint answers
/// one line, and after `ok` the bytes of `S` from the first piece asked for, whole pieces in
/// order, until the end of `S` or an earlier piece boundary, then closes. A §2 sender never
/// starts it by accident: the line begins with `#`, and a §2 payload is a JSON object.
///
/// ```swift
/// let request = AttachmentFetchExchange.Request(messageId: m, attachmentId: a, firstPiece: 7)
/// UnixSocket.sendAll(fd, request.line)          // "#sotto-attachment-fetch v1 <m> <a> 7\n"
/// AttachmentFetchExchange.answer(line)            // .ok, .refused(.unknownAttachment), .notSpoken(…)
/// ```
public enum AttachmentFetchExchange {
    // MARK: The wire

    /// What every request line begins with.
    public static let requestPrefix: [UInt8] = Array("#sotto-attachment-fetch v1 ".utf8)
    /// The endpoint's answer before the bytes of `S` (without its LF).
    public static let okLine: [UInt8] = Array("#sotto-attachment v1 ok".utf8)
    /// The endpoint's answer when it sends nothing: followed by a code and LF.
    public static let refusedPrefix: [UInt8] = Array("#sotto-attachment v1 refused ".utf8)
    /// The longest answer line a fetcher reads before giving up on it.
    public static let maxAnswerBytes = 128

    /// Why an endpoint sends nothing.
    public enum Refusal: String, Sendable, Equatable, CaseIterable {
        /// The request line is not as the page says, or its piece is past the file's end.
        case badRequest = "bad_request"
        /// No message with that id here, not an attachment, another attachment id, an exploded
        /// conversation, or a file that is not whole here.
        case unknownAttachment = "unknown_attachment"
        /// The endpoint's database is busy: ask again later.
        case busy = "busy"

        public var line: [UInt8] { refusedPrefix + Array(rawValue.utf8) + [0x0a] }
    }

    /// One request: the attachment message's id, its reference's `id`, and the first piece wanted.
    public struct Request: Sendable, Equatable {
        public let messageId: String
        public let attachmentId: String
        public let firstPiece: Int

        public init(messageId: String, attachmentId: String, firstPiece: Int) {
            self.messageId = messageId
            self.attachmentId = attachmentId
            self.firstPiece = firstPiece
        }

        /// The request line, LF included.
        public var line: [UInt8] {
            requestPrefix + Array("\(messageId) \(attachmentId) \(firstPiece)".utf8) + [0x0a]
        }
    }

    // MARK: The endpoint's side

    /// Whether a first line (without its LF) is a fetch request, well formed or not.
    public static func opens(_ line: [UInt8]) -> Bool {
        line.starts(with: Array("#sotto-attachment-fetch".utf8))
    }

    /// The request a first line (without its LF) makes; nil for anything else than exactly
    /// `#sotto-attachment-fetch v1 <32 hex> <32 hex> <piece>` (lowercase hex, one space each,
    /// the piece in decimal, no sign, no leading zero, below 1,600).
    public static func request(_ line: [UInt8]) -> Request? {
        guard line.starts(with: requestPrefix) else { return nil }
        let fields = line.dropFirst(requestPrefix.count).split(separator: 0x20, omittingEmptySubsequences: false)
        guard fields.count == 3, let messageId = String(validating: fields[0], as: UTF8.self),
              let attachmentId = String(validating: fields[1], as: UTF8.self),
              ProtocolIds.isId16(messageId), ProtocolIds.isId16(attachmentId),
              let piece = decimal(fields[2]), piece < AttachmentPieces.maxPieces else { return nil }
        return Request(messageId: messageId, attachmentId: attachmentId, firstPiece: piece)
    }

    private static func decimal(_ digits: ArraySlice<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              digits.count == 1 || digits.first != 0x30 else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    // MARK: The fetcher's side

    /// What an endpoint's first line (without its LF) says.
    public enum Answer: Sendable, Equatable {
        case ok
        case refused(Refusal)
        /// Anything else: a §2 ack (an endpoint without this exchange answers
        /// `malformed_payload`), an unknown code, garbage.
        case notSpoken(String)
    }

    public static func answer(_ line: [UInt8]) -> Answer {
        if line == okLine { return .ok }
        if line.starts(with: refusedPrefix), let code = String(validating: line.dropFirst(refusedPrefix.count), as: UTF8.self),
           let refusal = Refusal(rawValue: code) {
            return .refused(refusal)
        }
        let shown = String(decoding: line.prefix(80), as: UTF8.self).unicodeScalars
            .map { $0.value >= 0x20 && $0.value < 0x7f ? String($0) : "?" }.joined()
        return .notSpoken(shown)
    }
}
