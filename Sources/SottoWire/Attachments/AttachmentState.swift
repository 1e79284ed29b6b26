/// Where a message's attachment is on this device (docs/protocol/attachments.md §9). A sender
/// holds its own stored copy (`available`); a recipient has the reference (`waiting`) until
/// the daemon fetches the file (`fetching`, then `available` or `failed`, docs/adr/0078).
///
/// ```swift
/// let state: AttachmentState = message.isOutgoing ? .available : .waiting
/// state.rawValue   // "available"
/// ```
public enum AttachmentState: String, Sendable, Hashable, Codable, CaseIterable {
    /// The reference is here, the stored file is not, and no fetch is under way (over the
    /// automatic size, or not carried to this device's endpoint).
    case waiting
    /// The stored file is coming, piece by piece, each checked as it arrives.
    case fetching
    /// The stored file is on this device, whole and checked.
    case available
    /// The fetch stopped, for a reason the timeline says.
    case failed
}
