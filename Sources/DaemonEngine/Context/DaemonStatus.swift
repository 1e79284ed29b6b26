import DaemonCore
import SottoCrypto
import SottoWire

/// What `sotto status` reports of a running daemon, as the engine knows it: the inbox LRU's
/// snapshot, the unused inbox, the feed, the WAL, what did not open, the notices waiting. The
/// daemon app adds its version and where the master key lives, and makes the wire's
/// `StatusResult` of it where the engine meets the control socket (docs/adr/0075).
///
/// ```swift
/// let status = await context.status()
/// status.inboxes.awake.count   // awake inboxes now
/// ```
public struct DaemonStatus: Sendable {
    /// The WAL keeper's checkpoints since start.
    public struct Checkpoints: Sendable, Equatable {
        public let passive: Int
        public let truncate: Int
        public let busy: Int
    }

    public let pid: Int64
    public let group: GroupDirectory
    public let runtime: RuntimeDirectory
    public let conversations: Int64
    public let inboxes: InboxLRUSnapshot
    public let unusedInboxReady: Bool
    public let unusedInboxHits: Int
    public let unusedInboxMisses: Int
    public let lastSeq: Int64
    public let walBytes: Int64
    public let checkpoints: Checkpoints
    public let uptimeMs: Int64
    /// Identities that did not open at start-up.
    public let damagedIdentities: [KeystoreAudit.Damaged]
    /// What the damage marker says, when the database is marked damaged.
    public let databaseDamaged: String?
    /// Inbox id → how many clients hold its conversation open.
    public let openInClient: [String: Int64]
    /// Explode notices waiting for members not reached yet (docs/adr/0034), when readable.
    public let outlivingNotices: (notices: Int64, members: Int64)?
    public let sqliteHeapUsedBytes: Int64
    public let sqliteHeapHighwaterBytes: Int64
}
