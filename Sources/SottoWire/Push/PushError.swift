/// The error codes of PROTOCOL §2, with their exact wire spelling.
///
/// ```swift
/// PushErrorCode.busy.rawValue   // "busy"
/// PushErrorCode.busy.retry      // true
/// ```
public enum PushErrorCode: String, Sendable, Equatable, CaseIterable {
    case payloadTooLarge = "payload_too_large"
    case malformedPayload = "malformed_payload"
    case unsupportedVersion = "unsupported_version"
    case unknownClient = "unknown_client"
    case decryptFailed = "decrypt_failed"
    case malformedMessage = "malformed_message"
    case badSignature = "bad_signature"
    case unknownConversation = "unknown_conversation"
    case unknownSender = "unknown_sender"
    case conversationExpired = "conversation_expired"
    case unsupportedContent = "unsupported_content"
    /// The push names a body that did not arrive (docs/protocol/bodies.md §7).
    case bodyMissing = "body_missing"
    /// The body, or its reference, does not match (docs/protocol/bodies.md §7).
    case bodyMismatch = "body_mismatch"
    /// A receipt names a message its recipient never sent to the receipt's signer
    /// (docs/protocol/receipts.md §5).
    case unknownMessage = "unknown_message"
    case timeout = "timeout"
    case busy = "busy"
    case `internal` = "internal"

    /// Whether the sender should try again later (only timeout, busy and internal).
    public var retry: Bool {
        switch self {
        case .timeout, .busy, .internal: return true
        default: return false
        }
    }
}

/// A rejected push: the code for the ack, and a human-readable detail that never holds secrets.
///
/// ```swift
/// throw PushError(.decryptFailed, "envelope authentication failed")
/// ```
public struct PushError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: PushErrorCode
    public let detail: String

    public init(_ code: PushErrorCode, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code.rawValue): \(detail)" }
}
