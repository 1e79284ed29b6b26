import DaemonCore
import DaemonLogging

/// Which inboxes connected clients hold open, and so keep awake with
/// ``ProtectionReason/openInClient`` (the source app's decision record "Inbox Lifecycle
/// Management": an open conversation is never evicted). A client has one conversation open
/// while its subscription to that one conversation lives (`subscribe` with `conversation`,
/// what `sotto watch --conversation ID` sends); it closes it with a new subscription or when
/// its connection ends, a client killed with SIGKILL included (its socket closes).
///
/// Subscriptions are counted per inbox: the protection is set when the first client opens
/// it and removed when the last one leaves. Each client is known by its connection's serial,
/// which is never reused while the daemon runs.
///
/// The same two moments write the shared database's `isOpen` (`OpenStateColumn`), which the
/// worker reads to post no desktop notification for a conversation open in a client
/// (docs/adr/0062). The column is written before the protection changes, so a client that
/// sees the conversation under `openInClient` in `sotto status` knows the worker sees it open.
///
/// ```swift
/// let open = OpenConversations(protection: inboxLRU, column: OpenStateColumn(database: database))
/// await open.open(inboxId, client: connection.serial)   // protected
/// await open.close(client: connection.serial)           // released if nobody else has it open
/// ```
public actor OpenConversations {
    private let protection: any InboxProtection
    private let column: OpenStateColumn
    /// The inbox each client has open.
    private var byClient: [UInt64: String] = [:]
    /// How many clients have each inbox open.
    private var counts: [String: Int] = [:]
    /// Inboxes the inbox LRU was last told are open.
    private var applied: Set<String> = []
    /// Inboxes whose protection is being brought in line right now.
    private var syncing: Set<String> = []

    init(protection: any InboxProtection, column: OpenStateColumn) {
        self.protection = protection
        self.column = column
    }

    /// `client` now has `inboxId` open (nil: no single conversation, e.g. a subscription to
    /// every change); whatever it had open before is closed.
    public func open(_ inboxId: String?, client: UInt64) async {
        let previous = byClient[client]
        guard previous != inboxId else { return }
        byClient[client] = inboxId
        if let inboxId { counts[inboxId, default: 0] += 1 }
        if let previous { decrement(previous) }
        if let inboxId { await sync(inboxId) }
        if let previous { await sync(previous) }
    }

    /// The client is gone (its connection closed): what it had open is released unless
    /// another client has it open too. Closing twice, or a client that opened nothing, is fine.
    public func close(client: UInt64) async {
        guard let inboxId = byClient.removeValue(forKey: client) else { return }
        decrement(inboxId)
        await sync(inboxId)
    }

    /// How many clients have `inboxId` open.
    func clients(of inboxId: String) -> Int { counts[inboxId] ?? 0 }

    private func decrement(_ inboxId: String) {
        let left = (counts[inboxId] ?? 1) - 1
        counts[inboxId] = left > 0 ? left : nil
    }

    /// Tells the database and the inbox LRU until what they were told matches the
    /// count. One caller per inbox does the telling; a change that arrives while it awaits is
    /// picked up by its next round, so opens and closes that race end in the state of the last one.
    private func sync(_ inboxId: String) async {
        guard syncing.insert(inboxId).inserted else { return }
        defer { syncing.remove(inboxId) }
        while true {
            let wanted = counts[inboxId] != nil
            guard wanted != applied.contains(inboxId) else { return }
            if wanted { applied.insert(inboxId) } else { applied.remove(inboxId) }
            do {
                try await column.record(inboxId, isOpen: wanted)
            } catch {
                // The worker goes on deciding by the old value; the next start clears it.
                DaemonLog.warning("inbox \(inboxId.prefix(12)) \(wanted ? "open" : "closed") in a client not recorded for the worker: \(error)")
            }
            do {
                try await protection.setProtected(inboxId, reason: .openInClient, wanted)
            } catch {
                // Protected all the same (the inbox LRU keeps the reason); it stays asleep until it can wake.
                DaemonLog.warning("inbox \(inboxId.prefix(12)) open in a client could not be woken: \(error)")
            }
        }
    }
}
