/// What keeps an inbox awake while something waits on it (a pending join request, an
/// invite not yet expired): the one thing join decisions need of the inbox LRU.
///
/// ```swift
/// let protection: any InboxProtection = inboxLRU
/// try await protection.setProtected(inboxId, reason: .pendingInvite, true)
/// ```
public protocol InboxProtection: Sendable {
    func setProtected(_ inboxId: String, reason: ProtectionReason, _ isOn: Bool) async throws
}

extension InboxLRU: InboxProtection {}
