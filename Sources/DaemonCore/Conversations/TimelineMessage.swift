import SottoCrypto
import SottoWire

/// Where an outgoing message is on its way out; incoming messages are `.received`.
///
/// ```swift
/// try await store.setDeliveryStatus("m1", .sent)
/// ```
public enum DeliveryStatus: String, Sendable, Hashable, Codable {
    case pending
    case sent
    case failed
    case received
}

/// The kind of content: the protocol's contentType string (PROTOCOL §5).
///
/// ```swift
/// let kind: MessageContentType = .text
/// ```
public struct MessageContentType: RawRepresentable, Sendable, Hashable, Codable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let text = MessageContentType(rawValue: ContentType.text)
    public static let reaction = MessageContentType(rawValue: ContentType.reaction)
    public static let reply = MessageContentType(rawValue: ContentType.reply)
    public static let attachment = MessageContentType(rawValue: ContentType.attachment)
}

/// One message as the daemon's conversation store and its clients see it, independent of
/// any database record. Ordered in a timeline by `(sentAtMs, id)`.
///
/// ```swift
/// let message = TimelineMessage(id: "m1", conversationId: "c1", senderInboxId: "me",
///                               sentAtMs: 1_700_000_000_000, contentType: .text,
///                               text: "hello", isOutgoing: true, deliveryStatus: .pending)
/// ```
public struct TimelineMessage: Sendable, Hashable, Codable, Identifiable {
    public var id: String
    public var conversationId: String
    public var senderInboxId: String
    public var sentAtMs: Int64
    public var contentType: MessageContentType
    /// What a client shows: the text, or a fallback description for other content types.
    public var text: String
    /// The message a reaction or reply refers to.
    public var referenceId: String?
    public var isOutgoing: Bool
    public var deliveryStatus: DeliveryStatus
    /// A `sotto/attachment:1.0` message's file, as its reference describes it.
    public var attachment: TimelineAttachment?

    public init(id: String, conversationId: String, senderInboxId: String, sentAtMs: Int64,
                contentType: MessageContentType = .text, text: String, referenceId: String? = nil,
                isOutgoing: Bool, deliveryStatus: DeliveryStatus, attachment: TimelineAttachment? = nil) {
        self.id = id
        self.conversationId = conversationId
        self.senderInboxId = senderInboxId
        self.sentAtMs = sentAtMs
        self.contentType = contentType
        self.text = text
        self.referenceId = referenceId
        self.isOutgoing = isOutgoing
        self.deliveryStatus = deliveryStatus
        self.attachment = attachment
    }

    /// Where the message stands in a timeline: its send time, then its id.
    public var sortKey: TimelinePosition { TimelinePosition(sentAtMs: sentAtMs, messageId: id) }
}

/// A place in a timeline: messages are ordered by send time, then id. Also the read marker:
/// everything at or before it is read.
///
/// ```swift
/// let marker = TimelinePosition(sentAtMs: 1_700_000_000_000, messageId: "m1")
/// ```
public struct TimelinePosition: Sendable, Hashable, Codable, Comparable {
    public var sentAtMs: Int64
    public var messageId: String

    public init(sentAtMs: Int64, messageId: String) {
        self.sentAtMs = sentAtMs
        self.messageId = messageId
    }

    public static func < (lhs: TimelinePosition, rhs: TimelinePosition) -> Bool {
        lhs.sentAtMs != rhs.sentAtMs ? lhs.sentAtMs < rhs.sentAtMs : lhs.messageId < rhs.messageId
    }
}
