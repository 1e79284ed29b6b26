/// Why a stored attachment was refused, or could not be made (docs/protocol/attachments.md
/// §5): the code is the refusal's name in the spec, `chunk` the chunk it was found in.
///
/// ```swift
/// do { try opener.consume(bytes) { _ in } } catch { error.code.rawValue }   // "attachment_bad_chunk"
/// ```
public struct AttachmentError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable, CaseIterable {
        // MARK: The stored file (what a recipient refuses)
        case badHeader = "attachment_bad_header"
        case badChunk = "attachment_bad_chunk"
        case badPadding = "attachment_bad_padding"
        case truncated = "attachment_truncated"
        case tooLong = "attachment_too_long"
        case digestMismatch = "attachment_digest_mismatch"
        // MARK: Making one (what a sender refuses; never on the wire)
        /// The file is larger than `AttachmentLayout.maxSize`.
        case tooLarge = "attachment_too_large"
        /// The source gave more or fewer bytes than the size it was stated to have.
        case sourceChanged = "attachment_source_changed"
        /// A read or write failed (the detail says which, with errno).
        case io = "attachment_io"
    }

    public let code: Code
    /// The chunk where a chunk, padding refusal was found.
    public let chunk: Int?
    public let detail: String

    public init(_ code: Code, chunk: Int? = nil, _ detail: String) {
        self.code = code
        self.chunk = chunk
        self.detail = detail
    }

    public var description: String { "\(code.rawValue)\(chunk.map { " (chunk \($0))" } ?? ""): \(detail)" }
}
