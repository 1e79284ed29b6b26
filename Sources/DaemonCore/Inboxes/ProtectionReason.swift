/// Why an inbox must not be evicted. An inbox with at least one reason is "protected": it is
/// never slept by eviction and is the only kind allowed to push the awake count over capacity.
///
/// ```swift
/// try await inboxLRU.setProtected("inbox-1", reason: .openInClient, true)
/// ```
public enum ProtectionReason: String, Sendable, Hashable, CaseIterable, Codable {
    /// The inbox's conversation is open in a connected client.
    case openInClient
    /// The inbox has an invite nobody has answered yet.
    case pendingInvite
    /// Someone asked to join and the request has not been handled.
    case pendingJoinRequest
}
