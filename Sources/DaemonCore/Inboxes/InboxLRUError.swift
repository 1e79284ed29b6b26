/// Why an inbox LRU operation failed. Carries ids and type names only, never key material.
///
/// ```swift
/// do { try await inboxLRU.wake("a", reason: .userInteraction) }
/// catch InboxLRUError.activationFailed(let id, _) { print("could not wake \(id)") }
/// ```
public enum InboxLRUError: Error, Sendable, Equatable {
    /// The inbox's resources threw from `activate()`; the inbox was left sleeping.
    /// `errorType` is the Swift type name of the underlying error.
    case activationFailed(inboxId: String, errorType: String)
    /// The activity source threw while ranking; nothing changed.
    case rankingUnavailable(errorType: String)
    /// A capacity below 1 was requested.
    case invalidCapacity(Int)
}

/// What a call to ``InboxLRU/wake(_:reason:at:)`` did.
///
/// ```swift
/// if case .woke(let evicted) = try await inboxLRU.wake("a", reason: .pushNotification) {
///     print("slept to make room: \(evicted)")
/// }
/// ```
public enum WakeOutcome: Sendable, Equatable {
    /// The inbox is now awake; `evicted` were slept to make room (least recently active first).
    case woke(evicted: [String])
    /// It was already awake; only its recency was refreshed.
    case alreadyAwake
    /// Capacity is reached and every awake inbox is protected: an unprotected inbox may not
    /// exceed capacity, so it stays sleeping. Protect it first if it must be awake.
    case noRoom
}
