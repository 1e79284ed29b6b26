import Foundation
import GRDB
import ServiceLifecycle
import SharedStore

/// Deletes exploded conversations completely (the source app's decision record "Conversation Explode Feature"): at launch, when signalled (a
/// worker stored an `explode_settings`, or this device exploded one), and on a timer set to
/// the next `expiresAt`. For each expired conversation's inbox, in this order: every row in
/// one transaction together with a tombstone naming its identity (`InboxDeletion`, ADR
/// 0016), the keystore identity (overwritten, then unlinked), the tombstone, the
/// lifecycle's entry, the in-memory stores, then a TRUNCATE checkpoint so that with
/// `secure_delete=ON` no freed page or WAL frame keeps the plaintext. A tombstone left by a
/// crash is finished by `finishTombstones()` at start-up, before the daemon serves.
///
/// Only the creator explodes a conversation (docs/protocol-rules.md): an `expiresAt` counts
/// only as far as an `explode_settings` message from the creator stored in the conversation
/// backs it. One with no such message (written by an older worker that took it from any
/// member) is cleared, one earlier than the creator's is moved to the creator's time.
///
/// ```swift
/// let expired = ExpiredConversationsWorker(database: db, keystore: ks, lifecycle: lifecycle, awake: awake)
/// // run by the daemon's service group (DaemonServices); stops on its graceful shutdown
/// await expired.signal()                       // after expiresAt changed
/// try await expired.deleteInbox(inboxId)       // explode now
/// ```
actor ExpiredConversationsWorker: Service {
    /// Longest sleep between sweeps when nothing is scheduled (a safety net only).
    static let idleSweepMs: Int64 = 60_000

    let database: DaemonDatabase
    let keystore: Keystore
    /// What forgets a deleted inbox: its lifecycle entry and what it held while awake.
    let lifecycle: InboxLifecycleManager
    let awake: AwakeInboxes
    private let wakeSignal = WakeSignal()
    /// Inboxes an explode in this process is still reporting on: it deletes them itself
    /// once it has counted the deliveries (the cascade would take the outbox rows it counts).
    private var reporting: Set<String> = []
    private(set) var deletedInboxes = 0

    /// How long a deletion waits for this device's own explode message to reach the
    /// members (ADR 0016): the conversation's rows hold the pushes.
    let explodeDeliveryBudgetMs: Int64
    /// How often a held-back deletion looks again whether the pushes are out.
    static let heldPollMs: Int64 = 250

    init(database: DaemonDatabase, keystore: Keystore, lifecycle: InboxLifecycleManager, awake: AwakeInboxes,
         explodeDeliveryBudgetMs: Int64 = 10_000) {
        self.database = database
        self.keystore = keystore
        self.lifecycle = lifecycle
        self.awake = awake
        self.explodeDeliveryBudgetMs = explodeDeliveryBudgetMs
    }

    func signal() { wakeSignal.wake() }

    /// The sweep leaves this inbox alone until `release` (an explode is counting its pushes).
    func hold(_ inboxId: String) { reporting.insert(inboxId) }

    func release(_ inboxId: String) {
        reporting.remove(inboxId)
        wakeSignal.wake()
    }

    /// Sweeps until the daemon's graceful shutdown (a sweep under way finishes); sleeps
    /// until signalled or until the next expiresAt.
    func run() async {
        await withGracefulShutdownHandler {
            while !Task.isShuttingDownGracefully, !Task.isCancelled {
                let next = await sweep()
                guard !Task.isShuttingDownGracefully else { return }
                await wakeSignal.sleep(until: next, atMostMs: Self.idleSweepMs, atLeastMs: 1)
            }
        } onGracefulShutdown: { [wakeSignal] in
            wakeSignal.finish()
        }
    }

    /// Deletes every inbox with a conversation whose expiresAt has passed. Returns the next
    /// future expiresAt, if any.
    @discardableResult
    func sweep() async -> Int64? {
        do {
            try await finishTombstones()
        } catch {
            DaemonLog.warning("deleted identities not wiped yet: \(error)")
        }
        let now = WallClock.nowMs()
        let candidates = (try? database.read { conn in
            try conn.query("""
                SELECT id, inboxId, creatorInboxId, expiresAt FROM conversation
                WHERE expiresAt IS NOT NULL AND expiresAt <= ?
                """, [.integer(now)]).map { row in
                (id: try row.string(0), inboxId: try row.string(1), creator: try row.string(2), expiresAt: try row.int64(3))
            }
        }) ?? []
        var expired: [String] = []
        var held = false
        for candidate in candidates {
            let backed: Int64?
            let pending: Bool
            do {
                (backed, pending) = try database.read { conn in
                    let backed = try Self.creatorExpiry(conversationId: candidate.id, creatorInboxId: candidate.creator, on: conn)
                    let pending = try conn.queryOne("SELECT 1 FROM conversation c WHERE c.id = ?1 AND \(Self.explodePushesPending)",
                                                    [.text(candidate.id), .text(ContentType.explodeSettings),
                                                     .integer(now - explodeDeliveryBudgetMs)]) != nil
                    return (backed, pending)
                }
            } catch {
                continue  // unreadable now (busy, damaged): decided on a later sweep, never cleared on a guess
            }
            if let backed, backed <= now {
                if pending {
                    held = true
                } else if !expired.contains(candidate.inboxId) {
                    expired.append(candidate.inboxId)
                }
                continue
            }
            DaemonLog.warning("conversation \(candidate.id.prefix(8)): explosion time not set by its creator; "
                              + (backed == nil ? "cleared" : "moved to the creator's"))
            _ = try? await database.write { conn in
                try conn.run("UPDATE conversation SET expiresAt = ? WHERE id = ? AND expiresAt = ?",
                             [.optional(backed), .text(candidate.id), .integer(candidate.expiresAt)])
            }
        }
        for inboxId in expired where !reporting.contains(inboxId) {
            do {
                try await deleteInbox(inboxId)
            } catch {
                DaemonLog.warning("expired inbox not deleted yet: \(error)")
            }
        }
        let next = try? database.read { conn in
            try conn.queryOne("SELECT min(expiresAt) FROM conversation WHERE expiresAt > ?", [.integer(now)])?.optionalInt64(0)
        } ?? nil
        guard held else { return next }
        return min(next ?? Int64.max, WallClock.nowMs() + Self.heldPollMs)
    }

    /// True for conversation `c` while its own explode message still has pending pushes and
    /// is younger than the delivery budget (binds: ?2 content type, ?3 now − budget).
    private static let explodePushesPending = """
        EXISTS (SELECT 1 FROM message m JOIN outbox o ON o.messageId = m.id
                WHERE m.conversationId = c.id AND m.isOutgoing = 1 AND m.contentType = ?2
                  AND m.receivedAt > ?3 AND o.state = 'pending')
        """

    /// The earliest `expiresAt` among the creator's explode_settings messages stored in the
    /// conversation (sent or received), or nil when the creator sent none.
    static func creatorExpiry(conversationId: String, creatorInboxId: String,
                              on conn: StoreConnection) throws(StoreError) -> Int64? {
        let rows = try conn.query("""
            SELECT content, fallback FROM message WHERE conversationId = ? AND senderInboxId = ? AND contentType = ?
            """, [.text(conversationId), .text(creatorInboxId), .text(ContentType.explodeSettings)])
        var earliest: Int64?
        for row in rows {
            guard case .explodeSettings(let at)? = try? MessageContent.decode(
                contentType: ContentType.explodeSettings, content: try row.blob(0), fallback: try row.optionalString(1))
            else { continue }
            earliest = min(earliest ?? at, at)
        }
        return earliest
    }

    /// Removes one inbox and everything of it from this device.
    func deleteInbox(_ inboxId: String) async throws {
        let conversationIds = try database.read { conn in
            try ConversationRepository.forInbox(inboxId: inboxId, on: conn).map(\.id)
        }
        let tombstone = try await database.write { conn -> InboxTombstone? in
            _ = try InboxDeletion.delete(inboxId: inboxId, on: conn)
            return try TombstoneRepository.find(inboxId: inboxId, on: conn)
        }
        CrashPoint.reach("explode.rowsCommitted")
        if let tombstone {
            do {
                try await finish(tombstone)
            } catch {
                // The tombstone stays: the worker refuses the identity, every sweep retries.
                DaemonLog.warning("identity of the exploded inbox not wiped yet: \(error)")
            }
        }
        await awake.forget(inboxId, conversationIds: conversationIds)
        await lifecycle.forceRemove(inboxId)  // whatever its protections
        try truncateWAL()
        deletedInboxes += 1
        DaemonLog.info("deleted exploded inbox with \(conversationIds.count) conversation(s)")
    }

    /// Wipes the keystore files of every inbox whose rows are deleted (a crash between the
    /// commit and the wipe leaves its tombstone), then forgets the tombstones. The daemon
    /// calls it at start-up before it serves; every sweep retries what failed.
    /// One that fails (logged, kept) does not hold back the others; returns how many finished.
    @discardableResult
    func finishTombstones() async throws -> Int {
        let tombstones = try database.read { conn in try TombstoneRepository.all(on: conn) }
        var finished = 0
        for tombstone in tombstones {
            do {
                try await finish(tombstone)
                finished += 1
            } catch {
                DaemonLog.warning("identity of a deleted inbox not wiped yet (retried by the next sweep): \(error)")
            }
        }
        if finished > 0 {
            DaemonLog.info("finished \(finished) interrupted identity deletion(s)")
        }
        return finished
    }

    private func finish(_ tombstone: InboxTombstone) async throws {
        do {
            try keystore.delete(clientId: tombstone.clientId, inboxId: tombstone.inboxId)
        } catch .missing {
            // not ids the keystore accepts: there is no file of it to wipe
        }
        CrashPoint.reach("explode.keysWiped")
        try await database.write { conn in try InboxDeletion.finish(tombstone, on: conn) }
    }

    /// `PRAGMA wal_checkpoint(TRUNCATE)` through the pool's writer, retried while a reader
    /// (a worker mid-write, a pool reader) holds it back, for at most ~2 s.
    private func truncateWAL() throws {
        for _ in 0..<40 {
            let done = try database.pool.writeWithoutTransaction { db -> Bool in
                let row = try GRDB.Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                let busy: Int = row?[0] ?? 1
                return busy == 0
            }
            if done { return }
            usleep(50_000)
        }
        DaemonLog.warning("TRUNCATE checkpoint stayed busy; the WAL keeper will retry")
    }
}
