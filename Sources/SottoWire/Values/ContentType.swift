/// The content types of PROTOCOL §5.
///
/// ```swift
/// ContentType.text   // "xmtp.org/text:1.0"
/// ```
public enum ContentType {
    public static let text = "xmtp.org/text:1.0"
    public static let reply = "xmtp.org/reply:1.0"
    public static let reaction = "xmtp.org/reaction:1.0"
    public static let explodeSettings = "convos.org/explode_settings:1.0"
    public static let joinRequest = "sotto/join_request:1.0"
    public static let membership = "sotto/membership:1.0"
    /// A reference to a sealed body (docs/protocol/bodies.md §4).
    public static let body = "sotto/body:1.0"
    /// A member leaves the conversation; the signature says who (docs/protocol/leave-remove.md).
    public static let leave = "sotto/leave:1.0"
    /// The creator removes a member (docs/protocol/leave-remove.md).
    public static let remove = "sotto/remove:1.0"
    /// A member's device tells the sender which of its messages it stored or refused
    /// (docs/protocol/receipts.md). Never shown, never stored as a message, never receipted.
    public static let receipt = "sotto/receipt:1.0"
    /// One versioned change of the roster, from the creator (docs/protocol/roster.md).
    public static let rosterDelta = "sotto/roster_delta:1.0"
    /// A member that sees a gap in its roster asks the creator for the full roster
    /// (docs/protocol/roster.md §9). Sent to the creator only, never shown, never stored as a message.
    public static let rosterRequest = "sotto/roster_request:1.0"
    /// A member asks the creator to rename it; the creator re-issues it as a roster delta
    /// (docs/protocol/roster.md §10). Sent to the creator only, never stored as a message.
    public static let rename = "sotto/rename:1.0"
    /// The creator refuses a join request it opened (docs/protocol/join-refusal.md). Sent to
    /// the requester alone, never stored as a message.
    public static let joinRefused = "sotto/join_refused:1.0"
    /// A file stored apart, encrypted in chunks; the message carries its reference
    /// (docs/protocol/attachments.md).
    public static let attachment = "sotto/attachment:1.0"
}

/// The sizes PROTOCOL §5 allows a content's fields: what a sender checks before it asks the
/// daemon, and what a receiver refuses beyond.
///
/// ```swift
/// guard text.utf8.count <= ContentLimits.maxTextBytes else { … }   // 65,536
/// ```
public enum ContentLimits {
    /// Members of one conversation, the creator included.
    public static let maxMembers = 1_000
    /// A text (alone or a reply's), inline or by reference (docs/protocol/bodies.md §2).
    public static let maxTextBytes = 65_536
    /// A member's profile name, as `sotto join --profile-name` allows it.
    public static let maxProfileNameBytes = 100
    /// A conversation's name, as `sotto new --name` allows it.
    public static let maxConversationNameBytes = 200
}
