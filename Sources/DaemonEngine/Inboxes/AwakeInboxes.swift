import DaemonCore
import DaemonStore
import Foundation
import SharedStore
import SottoCrypto

/// What awake inboxes hold: each one's unlocked identity and its conversations' in-memory
/// windows, loaded when the inbox LRU wakes the inbox (`AwakeInbox.activate`) and
/// dropped when it sleeps or is deleted. It depends on storage only, so the inbox LRU
/// inbox LRU's resource factory can be built before anything that uses the inbox LRU.
///
/// ```swift
/// let awake = AwakeInboxes(database: db, keystore: keystore, windows: windows)
/// let inboxLRU = InboxLRU(capacity: 20, activitySource: source) { AwakeInbox(inboxId: $0, inboxes: awake) }
/// let identity = await awake.identity(of: inboxId)   // nil while it sleeps
/// ```
actor AwakeInboxes {
    let database: DaemonDatabase
    let keystore: Keystore
    let windows: ConversationWindows
    /// What sotto-relayd reads to keep connections for awake inboxes only (nil: tell it nothing).
    let marks: AwakeMailboxMarks?
    private var unlocked: [String: Identity] = [:]

    init(database: DaemonDatabase, keystore: Keystore, windows: ConversationWindows, marks: AwakeMailboxMarks? = nil) {
        self.database = database
        self.keystore = keystore
        self.windows = windows
        self.marks = marks
    }

    /// Unlocks the identity and loads the latest messages of each conversation.
    func activate(_ inboxId: String) async throws {
        let identity = try keystore.identity(inboxId: inboxId)
        let conversations = try database.read { conn in try ConversationLookupRepository.forInbox(inboxId: inboxId, on: conn) }
        let database = self.database
        let cap = windows.cap
        for conversation in conversations {
            // The history is read inside the registry's open, so a message the change feed
            // applies meanwhile is either in it or appended to the new store, never neither.
            _ = try await windows.open(conversation.id) {
                try database.read { conn in
                    try MessageRowRepository.page(conversationId: conversation.id, before: nil, limit: cap, on: conn)
                }.reversed().map(TimelineMessage.init)
            }
        }
        unlocked[inboxId] = identity
        marks?.mark(identity.clientId)
    }

    func release(_ inboxId: String) async {
        if let clientId = unlocked[inboxId]?.clientId { marks?.unmark(clientId) }
        unlocked[inboxId] = nil
        database.contentKeys?.forget(inboxId: inboxId)  // a sleeping inbox's reads derive its key again
        let conversations = (try? database.read { conn in try ConversationLookupRepository.forInbox(inboxId: inboxId, on: conn) }) ?? []
        for conversation in conversations { await windows.drop(conversation.id) }
    }

    /// After an inbox was deleted (its rows are gone): its identity and the windows of the
    /// conversations it had.
    func forget(_ inboxId: String, conversationIds: [String]) async {
        if let clientId = unlocked[inboxId]?.clientId { marks?.unmark(clientId) }
        unlocked[inboxId] = nil
        database.contentKeys?.forget(inboxId: inboxId)  // crypto-shredding: no key of it stays in memory
        for id in conversationIds { await windows.drop(id) }
    }

    func identity(of inboxId: String) -> Identity? { unlocked[inboxId] }

    /// After the launch: the marks of exactly the inboxes awake now (a previous run's go).
    func syncMarks() {
        marks?.keepOnly(Set(unlocked.values.map(\.clientId)))
    }
}

/// An awake inbox's resources for the inbox LRU: `AwakeInboxes` loads them on wake
/// and drops them on sleep.
struct AwakeInbox: AwakeInboxResources {
    let inboxId: String
    let inboxes: AwakeInboxes

    func activate() async throws { try await inboxes.activate(inboxId) }
    func release() async { await inboxes.release(inboxId) }
}
