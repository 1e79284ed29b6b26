import DaemonCore
import DaemonLogging
import DaemonStore
import Foundation
import RelayTransport
import SharedStore
import SottoCrypto
import SottoWire

/// Everything a running daemon holds, built once at start-up in dependency order (see
/// `start`): keystore (opened by the daemon app, which waits for the master key) → database
/// (migrated) → awake inboxes → inbox LRU → workers → services → change feed. Every
/// part gets its dependencies in its initializer.
///
/// ```swift
/// let keystore = try await MasterKeyStartup(group: group, runtime: runtime, environment: env).openKeystore(notifier: notifier)
/// let context = try await DaemonContext.start(group: group, runtime: runtime, keystore: keystore, capacity: 20, environment: env)
/// ```
public final class DaemonContext: Sendable {
    public let group: GroupDirectory
    public let runtime: RuntimeDirectory
    public let database: DaemonDatabase
    public let keystore: Keystore
    public let service: ConversationService
    public let inboxLRU: InboxLRU
    /// What awake inboxes hold, and the marks that tell sotto-relayd which they are.
    let awake: AwakeInboxes
    /// The conversations control clients hold open (kept awake with `openInClient`).
    public let openConversations: OpenConversations
    public let unusedInboxes: UnusedInboxCache
    public let feed: ChangeFeed
    public let outbox: OutboxSender
    public let walKeeper: WALKeeper
    public let invites: InviteService
    public let joinRequests: JoinRequestHandler
    public let explodeWorker: ExplodeWorker
    public let explode: ExplodeService
    public let leave: LeaveService
    public let removals: RemoveService
    /// Seals the delivery receipts the worker records (docs/protocol/receipts.md).
    public let receipts: ReceiptSender
    /// Asks for the full roster after a gap, and answers members who ask (docs/protocol/roster.md §9).
    public let rosterRequests: RosterRequests
    /// Fetches incoming attachments' files in the background (docs/adr/0078).
    public let attachmentFetcher: AttachmentFetcher
    /// Identities that did not open at start-up: isolated (their inboxes stay asleep) and
    /// reported by `sotto status` and the log; every other conversation is served.
    public let damagedIdentities: [KeystoreAudit.Damaged]
    let startedAtMs = WallClock.nowMs()

    private init(group: GroupDirectory, runtime: RuntimeDirectory, database: DaemonDatabase, keystore: Keystore,
                 service: ConversationService, inboxLRU: InboxLRU, awake: AwakeInboxes, openConversations: OpenConversations,
                 unusedInboxes: UnusedInboxCache,
                 feed: ChangeFeed, outbox: OutboxSender, walKeeper: WALKeeper, invites: InviteService,
                 joinRequests: JoinRequestHandler, explodeWorker: ExplodeWorker, explode: ExplodeService, leave: LeaveService, removals: RemoveService,
                 receipts: ReceiptSender, rosterRequests: RosterRequests, attachmentFetcher: AttachmentFetcher,
                 damagedIdentities: [KeystoreAudit.Damaged]) {
        self.group = group
        self.runtime = runtime
        self.database = database
        self.keystore = keystore
        self.service = service
        self.inboxLRU = inboxLRU
        self.awake = awake
        self.openConversations = openConversations
        self.unusedInboxes = unusedInboxes
        self.feed = feed
        self.outbox = outbox
        self.walKeeper = walKeeper
        self.invites = invites
        self.joinRequests = joinRequests
        self.explodeWorker = explodeWorker
        self.explode = explode
        self.leave = leave
        self.removals = removals
        self.receipts = receipts
        self.rosterRequests = rosterRequests
        self.attachmentFetcher = attachmentFetcher
        self.damagedIdentities = damagedIdentities
    }

    /// Builds everything in dependency order, each part with all it needs handed to its
    /// initializer (nothing is attached later): storage first, then what an awake inbox
    /// holds, the inbox LRU over it, then the workers and services that use them.
    /// `relay`: this device's relay (`SOTTO_RELAY`, checked by the caller); its URL is then
    /// the endpoint in this device's invites and join requests, and the outbox publishes
    /// with its credentials.
    public static func start(group: GroupDirectory, runtime: RuntimeDirectory, keystore: Keystore, capacity: Int,
                      environment: [String: String], relay: RelayConfiguration? = nil,
                      pendingJoinLimit: PendingJoinLimit = PendingJoinLimit(),
                      noticeMaxAgeMs: Int64 = OutboxSender.defaultNoticeMaxAgeMs,
                      relayIdleMs: Int64 = RelayConnections.defaultIdleMs,
                      attachmentAutoFetchBytes: Int = AttachmentFetcher.defaultAutomaticLimit) async throws -> DaemonContext {
        // MARK: Storage
        // The keystore comes open: the daemon app checked the database's integrity and waited
        // for the master key first (docs/adr/0045); the migration to v10 needs it to seal content
        // (docs/adr/0052).
        let contentKeys = ContentKeyring { inboxId in (try? keystore.identity(inboxId: inboxId))?.databaseKey }
        let database = try DaemonDatabase(directory: group, profile: .daemon(environment: environment),
                                          contentKeys: contentKeys)
        // Before anything writes the keystore: what a killed daemon left half-written or half-wiped.
        if let wiped = try? keystore.sweepLeftovers(), wiped > 0 {
            DaemonLog.info("wiped \(wiped) keystore file(s) left by an interrupted operation")
        }
        let damagedIdentities = try KeystoreCheck.run(keystore, environment: environment)
        // No client is connected yet: a conversation a crashed run left open must notify again (docs/adr/0062).
        let openState = OpenStateColumn(database: database)
        do {
            let stale = try openState.clearAll()
            if stale > 0 { DaemonLog.info("\(stale) conversation(s) the last run left open in a client: notified again") }
        } catch {
            DaemonLog.warning("conversations the last run left open in a client stay without notifications: \(error)")
        }
        let unusedInboxes = UnusedInboxCache(vault: KeystoreIdentityVault(keystore: keystore)) { Identity.generate() }
        let endpoint = relay?.url.endpoint ?? environment["SOTTO_ENDPOINT"] ?? "unix:" + runtime.pushSocketPath
        let budget = environment["SOTTO_EXPLODE_DELIVERY_MS"].flatMap(Int64.init) ?? 10_000

        // MARK: Inboxes: what an awake one holds, and who decides which are awake
        let windows = ConversationWindows()
        let awake = AwakeInboxes(database: database, keystore: keystore, windows: windows, marks: AwakeMailboxMarks(group: group))
        // An identity that does not open stays asleep: neither launch nor a rebalance tries to wake it.
        let ranking = DatabaseActivitySource(database: database, excluding: Set(damagedIdentities.map(\.clientId)))
        let inboxLRU = InboxLRU(capacity: capacity, activitySource: ranking) { inboxId in
            AwakeInbox(inboxId: inboxId, inboxes: awake)
        }
        let identities = InboxIdentities(inboxLRU: inboxLRU, awake: awake, keystore: keystore)

        // MARK: Workers and services
        let walKeeper = WALKeeper(database: database, walPath: group.databasePath + "-wal",
                                  policy: try WALKeeper.Policy(environment: environment,
                                                               normalBusyMs: database.profile.busyTimeoutMs))
        if database.migratedExistingFile, !(await walKeeper.checkpointSoon()) {
            // The pages a migration rewrote (v10 sealed the plaintext, docs/adr/0052) leave the
            // file only when the WAL is checkpointed; the keeper keeps trying.
            DaemonLog.warning("TRUNCATE checkpoint after the migration stayed busy; the WAL keeper retries it")
        }
        let outbox = OutboxSender(database: database, relay: relay, noticeMaxAgeMs: noticeMaxAgeMs, relayIdleMs: relayIdleMs)
        let receipts = ReceiptSender(database: database, identities: identities, outbox: outbox)
        let rosterRequests = RosterRequests(database: database, identities: identities, outbox: outbox)
        let joinRequests = JoinRequestHandler(database: database, protection: inboxLRU, identities: identities, outbox: outbox)
        let attachments = AttachmentStore(group: group)
        let attachmentFetcher = AttachmentFetcher(database: database, store: attachments, relays: outbox.relays,
                                                  automaticLimit: attachmentAutoFetchBytes)
        let explodeWorker = ExplodeWorker(database: database, keystore: keystore, inboxLRU: inboxLRU, awake: awake,
                                                 walKeeper: walKeeper, attachments: attachments,
                                                 relayPurge: RelayAttachmentPurge(relays: outbox.relays), explodeDeliveryBudgetMs: budget,
                                                 pendingJoinLimitMs: pendingJoinLimit.ms)
        let service = ConversationService(database: database, unusedInboxes: unusedInboxes, windows: windows, endpoint: endpoint,
                                          inboxLRU: inboxLRU, identities: identities, outbox: outbox,
                                          joinRequests: joinRequests, attachments: attachments,
                                          attachmentFetcher: attachmentFetcher)
        let invites = InviteService(database: database, unusedInboxes: unusedInboxes, service: service, inboxLRU: inboxLRU,
                                    identities: identities, outbox: outbox, explodeWorker: explodeWorker, endpoint: endpoint)
        let explode = ExplodeService(database: database, service: service, outbox: outbox, explodeWorker: explodeWorker,
                                     deliveryBudgetMs: budget)
        // ADR 0016: an explosion a crash interrupted after its rows' commit is finished
        // before the daemon serves (a failure is retried by every sweep; until then the
        // tombstone makes the worker refuse the identity's pushes).
        do {
            try await explodeWorker.finishTombstones()
        } catch {
            DaemonLog.warning("deleted identities not wiped yet: \(error)")
        }
        // docs/adr/0074: a stored file whose message a crash kept from the database, and the
        // files of a conversation whose explode a crash interrupted, go before anything is sent.
        do {
            try attachments.sweep { ids in try database.read { conn in try MessageIdRepository.conversationIds(of: ids, on: conn) } }
        } catch {
            DaemonLog.warning("stored attachment files with no message not swept yet: \(error)")
        }

        // MARK: The change feed, last: it hands every commit to the parts above
        let latestSeq = try database.read { conn in try ChangeLogRepository.latestSeq(on: conn) }
        let router = ChangeRouter(walKeeper: walKeeper, windows: windows, inboxLRU: inboxLRU, explodeWorker: explodeWorker,
                                  joinRequests: joinRequests, receipts: receipts, rosterRequests: rosterRequests,
                                  attachmentFetcher: attachmentFetcher)
        let feed = ChangeFeed(database: database, startingAt: latestSeq,
                              damageRemedy: DatabaseDamage.remedy(group: group)) { changes in await router.route(changes) }
        return DaemonContext(group: group, runtime: runtime, database: database, keystore: keystore,
                             service: service, inboxLRU: inboxLRU, awake: awake, openConversations: OpenConversations(protection: inboxLRU, column: openState),
                             unusedInboxes: unusedInboxes, feed: feed,
                             outbox: outbox, walKeeper: walKeeper, invites: invites, joinRequests: joinRequests,
                             explodeWorker: explodeWorker, explode: explode, leave: LeaveService(service: service, explodeWorker: explodeWorker),
                             removals: RemoveService(service: service, database: database),
                             receipts: receipts, rosterRequests: rosterRequests, attachmentFetcher: attachmentFetcher,
                             damagedIdentities: damagedIdentities)
    }

    /// Launch initialisation (the source app's decision record "Inbox Lifecycle Management"): inboxes with pending invites or join requests first
    /// (protected), then the most active up to capacity; the rest sleep.
    public func launchInboxes() async throws {
        let damaged = Set(damagedIdentities.map(\.clientId))
        let (ranked, pending) = try database.read { conn -> ([DBInbox], [String]) in
            let ranked = try InboxRankingRepository.rankedByActivity(limit: 10_000, on: conn)
            let pending = try ProtectionRepository.inboxesWithPendingWork(now: WallClock.nowMs(), on: conn)
            // An inbox whose identity does not open stays asleep: waking it could only fail.
            let isolated = Set(ranked.filter { damaged.contains($0.clientId) }.map(\.inboxId))
            return (ranked.filter { !isolated.contains($0.inboxId) }, pending.filter { !isolated.contains($0) })
        }
        do {
            try await inboxLRU.launch(ranked: ranked.map { InboxActivity(inboxId: $0.inboxId, lastActivityMs: $0.lastActivityAt ?? 0) },
                                       pendingInvites: Set(pending))
        } catch InboxLRUError.activationFailed(let inboxId, let errorType) {
            // One inbox that cannot wake is no reason to stop serving the others.
            DaemonLog.error("inbox \(inboxId) could not be woken at start-up (\(errorType)); it stays asleep")
        }
        await awake.syncMarks()
    }

    /// `sotto status`, as the engine knows it (``DaemonStatus``).
    public func status() async -> DaemonStatus {
        let snapshot = await inboxLRU.snapshot()
        let conversations = (try? database.read { conn in try ConversationCountRepository.count(on: conn) }) ?? 0
        let unusedReady = (try? await unusedInboxes.hasPreparedIdentity()) ?? false
        let unusedStats = await unusedInboxes.stats
        let stats = await walKeeper.stats
        let notices = try? database.read { conn in try OutlivingNoticeRepository.counts(on: conn) }
        return DaemonStatus(
            pid: Int64(getpid()), group: group, runtime: runtime, conversations: conversations, inboxes: snapshot,
            unusedInboxReady: unusedReady, unusedInboxHits: unusedStats.hits, unusedInboxMisses: unusedStats.misses,
            lastSeq: await feed.lastSeq, walBytes: stats.lastWALBytes,
            checkpoints: DaemonStatus.Checkpoints(passive: stats.passive, truncate: stats.truncated, busy: stats.busy),
            uptimeMs: WallClock.nowMs() - startedAtMs, damagedIdentities: damagedIdentities,
            databaseDamaged: database.damageMarker.reason().map { DatabaseDamage.message(group: group, cause: $0) },
            openInClient: await openClients(snapshot.protectedBy[.openInClient] ?? []),
            outlivingNotices: notices, sqliteHeapUsedBytes: SQLiteHeap.usedBytes, sqliteHeapHighwaterBytes: SQLiteHeap.highwaterBytes)
    }

    /// The inboxes the inbox LRU protects as open in a client, with how many clients
    /// have each open (0 would mean a protection nobody holds any more).
    private func openClients(_ inboxIds: [String]) async -> [String: Int64] {
        var out: [String: Int64] = [:]
        for inboxId in inboxIds { out[inboxId] = Int64(await openConversations.clients(of: inboxId)) }
        return out
    }

    /// One line for systemd's STATUS=.
    public func statusLine() async -> String {
        let snapshot = await inboxLRU.snapshot()
        return "\(snapshot.awake.count)/\(snapshot.capacity) inboxes awake, \(snapshot.sleepingCount) sleeping, feed at seq \(await feed.lastSeq)"
    }
}
