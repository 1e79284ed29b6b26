/// One change to one conversation's timeline, as a store intent reports it. Indexes are
/// positions in the timeline right after the change, so changes can be replayed in order.
///
/// ```swift
/// for change in await store.upsertByID(message) {
///     if case .appended(let message, let index) = change { rows.insert(message, at: index) }
/// }
/// ```
public enum ConversationChange: Sendable, Equatable {
    /// A new message; `index == count - 1` in the usual case of a newest message.
    case appended(TimelineMessage, index: Int)
    /// A message changed in place (content, delivery status).
    case updated(TimelineMessage, index: Int)
    /// A message left the timeline: dropped beyond the cap, or moved (followed by `.appended`).
    case removed(messageId: String, index: Int)
}

/// Why a write to a conversation store was refused. Nothing changed.
///
/// ```swift
/// catch ConversationWindowError.wrongConversation(let expected, _) { ... }
/// ```
public enum ConversationWindowError: Error, Sendable, Equatable {
    /// The message belongs to another conversation.
    case wrongConversation(expected: String, got: String)
    /// A cap below 1 was requested.
    case invalidCap(Int)
}

/// What `append` did with a message.
///
/// ```swift
/// if try await store.append(message) == .duplicate { return }
/// ```
public enum AppendOutcome: Sendable, Equatable {
    case appended(index: Int)
    /// A message with this id is already in the timeline; nothing changed.
    case duplicate
    /// The timeline is at its cap and the message is older than all of it; nothing changed.
    case olderThanCap
}
