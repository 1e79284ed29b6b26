import DaemonCore
import DaemonLogging
import DaemonStore
import Foundation
import ServiceLifecycle
import SharedStore
import SottoCrypto
import SottoWire

/// Deletes exploded conversations completely (the source app's decision record "Conversation Explode Feature"): at launch, when signalled (a
/// worker stored an `explode_settings`, or this device exploded one), and on a timer set to
/// the next `expiresAt`. For each expired conversation's inbox, in this order: every row in
/// one transaction together with a tombstone naming its identity (`InboxDeletion`, ADR
/// 0016) and with the move of its explode pushes still pending into the notices that
/// outlive their conversation (`OutlivingNoticeWriter`, docs/adr/0034), the keystore
/// identity (overwritten, then unlinked), the tombstone, the conversations' stored attachment
/// files (`AttachmentStore`), the inbox LRU's entry, the
/// in-memory windows, then a TRUNCATE checkpoint (asked of `WALKeeper`, the one
/// checkpointer) so that with `secure_delete=ON` no freed page or WAL frame keeps the
/// plaintext. A tombstone left by a
/// crash is finished by `finishTombstones()` at start-up, before the daemon serves.
///
/// A join the creator never accepted (refused, the invite expired, the creator gone) is
/// given up the same way once `pendingJoinLimitMs` passed since this device asked: the
/// `pendingJoin` conversation and its identity are deleted on this device (docs/adr/0033).
/// A join the creator refused in a signed `sotto/join_refused:1.0` is deleted so at once
/// (docs/protocol/join-refusal.md, docs/adr/0061).
/// The unused inbox (a prepared identity with no rows) is not a conversation and is never
/// touched.
///
/// Only the creator explodes a conversation (docs/protocol-rules.md): an `expiresAt` counts
/// only as far as the creator's explode decision in force in the conversation backs it
/// (docs/protocol/explode-schedule.md §3). One with no such decision, or a cancelled one
/// (written by an older worker that took it from any member) is cleared, one earlier than
/// the creator's is moved to the creator's time.
///
/// ```swift
/// let explodeWorker = ExplodeWorker(database: db, keystore: ks, inboxLRU: inboxLRU, awake: awake,
///                                            walKeeper: keeper)
/// // run by the daemon's service group (DaemonServices); stops on its graceful shutdown
/// await explodeWorker.kick()                       // after expiresAt changed
/// try await explodeWorker.deleteInbox(inboxId)       // explode now
/// ```
public actor ExplodeWorker: Service {
    /// Longest sleep between sweeps when nothing is scheduled (a safety net only).
    static let idleSweepMs: Int64 = 60_000

    let database: DaemonDatabase
    let keystore: Keystore
    /// What forgets a deleted inbox: its inbox LRU entry and what it held while awake.
    let inboxLRU: InboxLRU
    let awake: AwakeInboxes
    let walKeeper: WALKeeper
    /// The conversations' stored attachment files, deleted with their rows.
    let attachments: AttachmentStore
    /// An exploded conversation's files on its members' relays, deleted after its rows.
    let relayPurge: RelayAttachmentPurge
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
    /// How long a join may stay pending before it is given up (``PendingJoinLimit``).
    let pendingJoinLimitMs: Int64
    private(set) var abandonedJoins = 0
    private(set) var refusedJoins = 0

    init(database: DaemonDatabase, keystore: Keystore, inboxLRU: InboxLRU, awake: AwakeInboxes,
         walKeeper: WALKeeper, attachments: AttachmentStore, relayPurge: RelayAttachmentPurge,
         explodeDeliveryBudgetMs: Int64 = 10_000,
         pendingJoinLimitMs: Int64 = PendingJoinLimit.defaultMs) {
        self.database = database
        self.keystore = keystore
        self.inboxLRU = inboxLRU
        self.awake = awake
        self.walKeeper = walKeeper
        self.attachments = attachments
        self.relayPurge = relayPurge
        self.explodeDeliveryBudgetMs = explodeDeliveryBudgetMs
        self.pendingJoinLimitMs = pendingJoinLimitMs
    }

    func kick() { wakeSignal.wake() }

    /// The sweep leaves this inbox alone until `release` (an explode is counting its pushes).
    func hold(_ inboxId: String) { reporting.insert(inboxId) }

    func release(_ inboxId: String) {
        reporting.remove(inboxId)
        wakeSignal.wake()
    }

    /// Sweeps until the daemon's graceful shutdown (a sweep under way finishes); sleeps
    /// until signalled or until the next expiresAt.
    public func run() async {
        await wakeSignal.serve(atMostMs: Self.idleSweepMs) { await self.sweep() }
    }

    /// Deletes every inbox with a conversation whose expiresAt has passed, and every inbox
    /// whose join has waited longer than `pendingJoinLimitMs`. Returns when the next of
    /// either is due, if any.
    @discardableResult
    func sweep() async -> Int64? {
        do {
            try await finishTombstones()
        } catch {
            DaemonLog.warning("deleted identities not wiped yet: \(error)")
        }
        let now = WallClock.nowMs()
        let candidates = (try? database.read { conn in try ExplodeRepository.due(now: now, on: conn) }) ?? []
        var expired: [String] = []
        /// Of those, the ones whose conversation exploded (not left, not removed): their files go from the relays too.
        var exploded: Set<String> = []
        var held = false
        for candidate in candidates {
            let backed: Int64?
            let explodedAt: Int64?
            let pending: Bool
            do {
                (backed, explodedAt, pending) = try database.read { conn in
                    let explodeTime = try ExplodeRepository.creatorExpiry(conversationId: candidate.id,
                                                                         creatorInboxId: candidate.creatorInboxId, on: conn)
                    // This device left it (docs/protocol/leave-remove.md): deleted here as if exploded.
                    let left = try ExplodeRepository.ownLeaveTime(conversationId: candidate.id,
                                                                    ownInboxId: candidate.inboxId, on: conn)
                    // The creator removed this device (docs/protocol/leave-remove.md §6): the same.
                    let removed = try ExplodeRepository.removedTime(conversationId: candidate.id, ownInboxId: candidate.inboxId,
                                                                      creatorInboxId: candidate.creatorInboxId, on: conn)
                    let backed = [explodeTime, left, removed].compactMap { $0 }.min()
                    let pending = try ExplodeRepository.ownExplodePushesPending(
                        conversationId: candidate.id, storedAfter: now - explodeDeliveryBudgetMs, on: conn)
                    return (backed, explodeTime, pending)
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
                if let explodedAt, explodedAt <= now { exploded.insert(candidate.inboxId) }
                continue
            }
            DaemonLog.warning("conversation \(candidate.id.prefix(8)): explosion time not set by its creator; "
                              + (backed == nil ? "cleared" : "moved to the creator's"))
            _ = try? await database.write { conn in
                try ExplodeWriter.correctExpiry(conversationId: candidate.id, from: candidate.expiresAt, to: backed, on: conn)
            }
        }
        for inboxId in expired where !reporting.contains(inboxId) {
            do {
                try await deleteInbox(inboxId, purgeRelayFiles: exploded.contains(inboxId))
            } catch {
                DaemonLog.warning("expired inbox not deleted yet: \(error)")
            }
        }
        let nextJoinDue = await abandonStalledJoins(now: now)
        let nextExpiry = try? database.read { conn in try ExplodeRepository.nextExpiry(after: now, on: conn) } ?? nil
        let next = [nextExpiry, nextJoinDue].compactMap { $0 }.min()
        guard held else { return next }
        return min(next ?? Int64.max, WallClock.nowMs() + Self.heldPollMs)
    }

    /// Deletes the inboxes of joins asked more than `pendingJoinLimitMs` ago and never
    /// accepted, and of joins the creator refused, as an explode deletes (rows and tombstone,
    /// then the identity). Returns when
    /// the oldest join still pending reaches the limit.
    private func abandonStalledJoins(now: Int64) async -> Int64? {
        let stale = (try? database.read { conn in
            try PendingJoinRepository.inboxes(askedBefore: now - pendingJoinLimitMs, on: conn)
        }) ?? []
        for inboxId in stale where !reporting.contains(inboxId) {
            DaemonLog.info("a join waited \(pendingJoinLimitMs / 1000) s and was never accepted; deleting it and its identity")
            do {
                try await deleteInbox(inboxId)
                abandonedJoins += 1
            } catch {
                DaemonLog.warning("abandoned join not deleted yet: \(error)")
            }
        }
        // The creator refused (docs/protocol/join-refusal.md): deleted now, the same way; the
        // `join_refusal` row stays to tell the user.
        let refused = (try? database.read { conn in try JoinRefusalRepository.refusedPendingInboxes(on: conn) }) ?? []
        for inboxId in refused where !reporting.contains(inboxId) && !stale.contains(inboxId) {
            DaemonLog.info("the creator refused a join; deleting it and its identity")
            do {
                try await deleteInbox(inboxId)
                refusedJoins += 1
            } catch {
                DaemonLog.warning("refused join not deleted yet: \(error)")
            }
        }
        let oldest = try? database.read { conn in try PendingJoinRepository.oldestRequest(on: conn) }
        return (oldest ?? nil).map { max($0 + pendingJoinLimitMs, now + 1) }
    }

    /// Removes one inbox and everything of it from this device; `purgeRelayFiles` (an
    /// explode): its conversations' files from their members' relays too. Otherwise (a leave,
    /// a removal), after which the others may still need them, it only tells the relays it
    /// needs none of the files it never fetched (`RelayAttachmentRelease`).
    func deleteInbox(_ inboxId: String, purgeRelayFiles: Bool = false) async throws {
        let conversationIds = try database.read { conn in
            try ConversationLookupRepository.forInbox(inboxId: inboxId, on: conn).map(\.id)
        }
        // Read while the references and their keys are here; purged once the rows are gone.
        let relayFiles = purgeRelayFiles
            ? ((try? database.read { conn in try RelayAttachmentPurge.files(of: conversationIds, on: conn) }) ?? []) : []
        let unfetched = purgeRelayFiles ? [] : RelayAttachmentRelease.unfetched(of: conversationIds, database: database, store: attachments)
        let (tombstone, notices) = try await database.write { conn -> (InboxTombstone?, Int) in
            // docs/adr/0034: the explode pushes still pending outlive the conversation, in this
            // same transaction, so a crash leaves them in the outbox or in the notice queue.
            let now = WallClock.nowMs()
            let notices = try OutlivingNoticeWriter.adopt(inboxId: inboxId, now: now, on: conn)
            _ = try InboxDeletion.delete(inboxId: inboxId, now: now, on: conn)
            return (try TombstoneWipeRepository.find(inboxId: inboxId, on: conn), notices)
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
        // The files' keys were in the rows just deleted and sealed with the key just wiped; the
        // files go too (a crash before this is swept at the next start, docs/adr/0074).
        let files = attachments.deleteConversations(conversationIds)
        let purged = await relayPurge.purge(relayFiles)
        let released = await RelayAttachmentRelease(relays: relayPurge.relays).release(unfetched)
        await awake.forget(inboxId, conversationIds: conversationIds)
        await inboxLRU.forceRemove(inboxId)  // whatever its protections
        if !(await walKeeper.checkpointSoon()) {
            DaemonLog.warning("TRUNCATE checkpoint after an explode stayed busy; the WAL keeper retries it")
        }
        deletedInboxes += 1
        DaemonLog.info("deleted exploded inbox with \(conversationIds.count) conversation(s)"
                       + (files > 0 ? " and \(files) stored attachment file(s)" : "")
                       + (purged > 0 ? ", \(purged) file(s) purged from relays" : "")
                       + (released.marked > 0 ? ", \(released.marked) file(s) never fetched marked as not needed (\(released.deleted) then deleted from their relay)" : "")
                       + (notices > 0 ? "; \(notices) notice(s) wait for members not reached yet" : ""))
    }

    /// Wipes the keystore files of every inbox whose rows are deleted (a crash between the
    /// commit and the wipe leaves its tombstone), then forgets the tombstones. The daemon
    /// calls it at start-up before it serves; every sweep retries what failed.
    /// One that fails (logged, kept) does not hold back the others; returns how many finished.
    @discardableResult
    func finishTombstones() async throws -> Int {
        let tombstones = try database.read { conn in try TombstoneWipeRepository.all(on: conn) }
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
        database.contentKeys?.forget(inboxId: tombstone.inboxId)
        CrashPoint.reach("explode.keysWiped")
        try await database.write { conn in try InboxDeletion.finish(tombstone, on: conn) }
    }
}
