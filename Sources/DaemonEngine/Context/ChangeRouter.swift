import DaemonCore
import SharedStore

/// The one place a committed change's effects are decided: the change feed hands every batch
/// here (any process's commits, the daemon's own too), in seq order, before subscribers hear of
/// it. New and updated messages go to the awake conversation's window; a message for a sleeping
/// inbox wakes it (pushNotification); a join request, a member who left, an explode time or a
/// refused join wake the part that acts on it; a new message or roster change wakes the receipt
/// sender and the roster requests; a new incoming attachment goes to the fetcher; any commit
/// tells the WAL keeper. Nothing is read back: the
/// feed read what each change is about once (``FeedChange``).
///
/// ```swift
/// let router = ChangeRouter(walKeeper: walKeeper, windows: windows, inboxLRU: inboxLRU, explodeWorker: explodeWorker,
///                           joinRequests: joinRequests, receipts: receipts, rosterRequests: rosterRequests,
///                           attachmentFetcher: attachmentFetcher)
/// let feed = ChangeFeed(database: database, startingAt: latestSeq) { changes in await router.route(changes) }
/// ```
struct ChangeRouter: Sendable {
    let walKeeper: WALKeeper
    let windows: ConversationWindows
    let inboxLRU: InboxLRU
    let explodeWorker: ExplodeWorker
    let joinRequests: JoinRequestHandler
    let receipts: ReceiptSender
    let rosterRequests: RosterRequests
    let attachmentFetcher: AttachmentFetcher

    /// Applies a batch, change by change in seq order, then wakes the senders it concerns.
    func route(_ changes: [FeedChange]) async {
        await walKeeper.noteCommit()  // someone wrote: an idle checkpoint is due once things calm down
        for change in changes { await apply(change) }
        if changes.contains(where: { $0.knownKind == .messageInserted || $0.knownKind == .membersChanged }) {
            receipts.kick()
        }
        if changes.contains(where: { $0.knownKind == .membersChanged || $0.knownKind == .rosterRequested }) {
            rosterRequests.kick()
        }
    }

    /// One change's effect on the conversation windows, the inbox LRU and the parts that act
    /// on a conversation's changes. Kinds that need nothing here (an inbox or conversation
    /// created, a read marker) pass.
    private func apply(_ change: FeedChange) async {
        guard let conversationId = change.conversationId else { return }
        switch change.knownKind {
        case .messageInserted, .messageStatusChanged:
            guard let message = change.message else { return }
            if let window = await windows.window(for: conversationId) {
                if change.knownKind == .messageInserted {
                    _ = try? await window.append(message)
                } else {
                    _ = try? await window.upsertByID(message)
                }
            }
            if change.knownKind == .messageInserted, message.attachment != nil { await attachmentFetcher.consider(message) }
            guard let inboxId = change.inboxId else { return }
            if change.knownKind == .messageInserted, !message.isOutgoing, await inboxLRU.state(of: inboxId) != .awake {
                _ = try? await inboxLRU.wake(inboxId, reason: .pushNotification)
            }
            await inboxLRU.recordActivity(inboxId, at: change.change.createdAt)
        case .membersChanged, .conversationExpiresChanged:
            // The worker stored the membership / explode_settings message as a timeline row.
            if let message = change.message, let window = await windows.window(for: conversationId) {
                _ = try? await window.upsertByID(message)
            }
            if change.knownKind == .conversationExpiresChanged { await explodeWorker.kick() }
            // A member left (the worker dropped it): the creator sends the updated list.
            if change.knownKind == .membersChanged { await joinRequests.announceAfterLeave(conversationId: conversationId) }
        case .joinRequestReceived:
            _ = await joinRequests.handlePending(conversationId: conversationId)
        case .joinRefused:
            // The creator refused this device's join: the sweep deletes it and its identity.
            await explodeWorker.kick()
        default:
            return
        }
    }
}
