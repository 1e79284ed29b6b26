import DaemonCore
import SottoCrypto

/// The identity an inbox signs with: the awake inbox's unlocked one, else the inbox is woken
/// for it (userInteraction), else, when waking was refused (over capacity), read from the
/// keystore for this one use. What sending, invites and join decisions take instead of
/// reaching into the conversation service.
///
/// ```swift
/// let identities = InboxIdentities(inboxLRU: inboxLRU, awake: awake, keystore: keystore)
/// let identity = try await identities.identity(of: conversation.inboxId)
/// ```
struct InboxIdentities: Sendable {
    let inboxLRU: InboxLRU
    let awake: AwakeInboxes
    let keystore: Keystore

    func identity(of inboxId: String) async throws -> Identity {
        if let identity = await awake.identity(of: inboxId) { return identity }
        _ = try await inboxLRU.wake(inboxId, reason: .userInteraction)
        if let identity = await awake.identity(of: inboxId) { return identity }
        return try keystore.identity(inboxId: inboxId)  // awake over capacity was refused: use it once
    }
}
