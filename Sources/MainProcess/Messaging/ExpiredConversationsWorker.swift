import Foundation
import GRDB
import SharedStore

/// Deletes exploded conversations completely (ADR 004): at launch, when signalled (a
/// worker stored an `explode_settings`, or this device exploded one), and on a timer set to
/// the next `expiresAt`. For each expired conversation's inbox, in this order: every row in
/// one transaction (`InboxDeletion`), the keystore identity (overwritten, then unlinked),
/// the lifecycle's entry, the in-memory stores, then a TRUNCATE checkpoint so that with
/// `secure_delete=ON` no freed page or WAL frame keeps the plaintext.
///
/// Only the creator explodes a conversation (docs/protocol-rules.md): an `expiresAt` counts
/// only as far as an `explode_settings` message from the creator stored in the conversation
/// backs it. One with no such message (written by an older worker that took it from any
/// member) is cleared, one earlier than the creator's is moved to the creator's time.
///
/// ```swift
/// let expired = ExpiredConversationsWorker(database: db, keystore: ks, service: service)
/// Task { await expired.run() }
/// await expired.signal()                       // after expiresAt changed
/// try await expired.deleteInbox(inboxId)       // explode now
/// ```
actor ExpiredConversationsWorker {
    /// Longest sleep between sweeps when nothing is scheduled (a safety net only).
    static let idleSweepMs: Int64 = 60_000

    let database: DaemonDatabase
    let keystore: Keystore
    let service: ConversationService
    private let wakeSignal = WakeSignal()
    private var running = true
    private(set) var deletedInboxes = 0

    init(database: DaemonDatabase, keystore: Keystore, service: ConversationService) {
        self.database = database
        self.keystore = keystore
        self.service = service
    }

    func signal() { wakeSignal.wake() }

    func stop() {
        running = false
        wakeSignal.finish()
    }

    /// Sweeps until stopped; sleeps until signalled or until the next expiresAt.
    func run() async {
        while running {
            let next = await sweep()
            guard running else { return }
            await wakeSignal.sleep(until: next, atMostMs: Self.idleSweepMs, atLeastMs: 1)
        }
    }

    /// Deletes every inbox with a conversation whose expiresAt has passed. Returns the next
    /// future expiresAt, if any.
    @discardableResult
    func sweep() async -> Int64? {
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
        for candidate in candidates {
            let backed: Int64?
            do {
                backed = try database.read { conn in
                    try Self.creatorExpiry(conversationId: candidate.id, creatorInboxId: candidate.creator, on: conn)
                }
            } catch {
                continue  // unreadable now (busy, damaged): decided on a later sweep, never cleared on a guess
            }
            if let backed, backed <= now {
                if !expired.contains(candidate.inboxId) { expired.append(candidate.inboxId) }
                continue
            }
            DaemonLog.warning("conversation \(candidate.id.prefix(8)): explosion time not set by its creator; "
                              + (backed == nil ? "cleared" : "moved to the creator's"))
            _ = try? await database.write { conn in
                try conn.run("UPDATE conversation SET expiresAt = ? WHERE id = ? AND expiresAt = ?",
                             [.optional(backed), .text(candidate.id), .integer(candidate.expiresAt)])
            }
        }
        for inboxId in expired {
            do {
                try await deleteInbox(inboxId)
            } catch {
                DaemonLog.warning("expired inbox not deleted yet: \(error)")
            }
        }
        return try? database.read { conn in
            try conn.queryOne("SELECT min(expiresAt) FROM conversation WHERE expiresAt > ?", [.integer(now)])?.optionalInt64(0)
        } ?? nil
    }

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
        try await database.write { conn in _ = try InboxDeletion.delete(inboxId: inboxId, on: conn) }
        do {
            try keystore.delete(inboxId: inboxId)
        } catch .missing {
            // already gone (a second sweep, or deleted by hand): nothing to wipe
        }
        await service.forget(inboxId: inboxId, conversationIds: conversationIds)
        try truncateWAL()
        deletedInboxes += 1
        DaemonLog.info("deleted exploded inbox with \(conversationIds.count) conversation(s)")
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
