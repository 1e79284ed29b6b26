/// Where a message's attachment is on this device (docs/protocol/attachments.md §8). Today a
/// sender holds its own stored copy (`available`) and a recipient has the reference only
/// (`waiting`): the transport that fetches the file is the next layer, not built yet.
///
/// ```swift
/// let state: AttachmentState = message.isOutgoing ? .available : .waiting
/// state.rawValue   // "available"
/// ```
public enum AttachmentState: String, Sendable, Hashable, Codable, CaseIterable {
    /// The reference is here, the stored file is not (a recipient, until the transport exists).
    case waiting
    /// The stored file is on this device, whole (the sender's own copy).
    case available
}
