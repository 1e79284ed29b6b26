/// Why an inbox was woken. Counted per reason in ``InboxLRUSnapshot`` for `sotto status`.
///
/// ```swift
/// try await inboxLRU.wake("inbox-1", reason: .pushNotification)
/// ```
public enum WakeReason: String, Sendable, Hashable, CaseIterable, Codable {
    /// The user opened or acted on the conversation in a client.
    case userInteraction
    /// A push arrived for a sleeping inbox.
    case pushNotification
    /// ``InboxLRU/rebalance()`` promoted one of the most active inboxes.
    case activityRanking
    /// The inbox has a pending invite or join request (always woken first at launch).
    case pendingInvite
    /// Launch woke one of the most active inboxes.
    case appLaunch
}
