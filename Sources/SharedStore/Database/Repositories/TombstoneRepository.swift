/// An identity whose database rows are deleted and whose keystore files are (or are about
/// to be) wiped (ADR 0016).
public struct InboxTombstone: Sendable, Equatable {
    public let clientId: String
    public let inboxId: String

    public init(clientId: String, inboxId: String) {
        self.clientId = clientId
        self.inboxId = inboxId
    }
}

/// The worker's read of `inbox_tombstone`: whether a push's clientId belongs to a deleted
/// inbox. What a restart still has to wipe is the daemon's read (DaemonStore's
/// `TombstoneWipeRepository`).
///
/// ```swift
/// if try TombstoneRepository.contains(clientId: push.clientId, on: conn) { … unknown_client … }
/// ```
public enum TombstoneRepository {
    public static func contains(clientId: String, on conn: SQLiteConnection) throws(StoreError) -> Bool {
        try conn.queryOne("SELECT 1 FROM inbox_tombstone WHERE clientId = ?", [.text(clientId)]) != nil
    }
}
