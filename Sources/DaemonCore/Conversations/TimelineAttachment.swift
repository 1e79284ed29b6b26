import SottoWire

/// What a timeline shows of a message's attachment: the file's name, size, media type and
/// caption from its reference, and where the file is on this device. Never the key or the
/// digest: those stay in the sealed content (docs/adr/0052, 0074).
///
/// ```swift
/// let attachment = TimelineAttachment(name: "photo.jpg", size: 1_258_291, mediaType: "image/jpeg",
///                                     caption: nil, state: .waiting)
/// attachment.text   // "📎 photo.jpg (1.2 MiB, waiting)"
/// ```
public struct TimelineAttachment: Sendable, Hashable, Codable {
    /// The sender's name for the file, as sent: untrusted, shown only through `InertText`.
    public var name: String
    public var size: Int
    public var mediaType: String
    public var caption: String?
    public var state: AttachmentState
    /// While `fetching`: bytes of the stored file here and checked (of `storedLength`).
    public var bytesDone: Int?
    /// The stored file's length (docs/protocol/attachments.md §2), what `bytesDone` counts to.
    public var storedLength: Int
    /// When `failed`: why, in Sotto's words.
    public var failure: String?

    public init(name: String, size: Int, mediaType: String, caption: String?, state: AttachmentState,
                bytesDone: Int? = nil, storedLength: Int = 0, failure: String? = nil) {
        self.name = name
        self.size = size
        self.mediaType = mediaType
        self.caption = caption
        self.state = state
        self.bytesDone = bytesDone
        self.storedLength = storedLength
        self.failure = failure
    }

    /// How far a fetch is, 0 … 100; nil unless `fetching`.
    public var percentDone: Int? {
        guard state == .fetching, let bytesDone, storedLength > 0 else { return nil }
        return bytesDone * 100 / storedLength
    }

    /// The message's display text: `📎 NAME (SIZE, STATE)` and the caption (`AttachmentLine`).
    public var text: String {
        AttachmentLine.text(name: name, size: size, state: state, caption: caption, percentDone: percentDone, failure: failure)
    }
}
