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

/// Read-only queries over `inbox_tombstone`: what a restart still has to wipe, and whether a
/// push's clientId belongs to a deleted inbox.
///
/// ```swift
/// for tombstone in try TombstoneRepository.all(on: conn) { … wipe, then InboxDeletion.finish … }
/// if try TombstoneRepository.contains(clientId: push.clientId, on: conn) { … unknown_client … }
/// ```
public enum TombstoneRepository {
    public static func all(on conn: SQLiteConnection) throws(StoreError) -> [InboxTombstone] {
        try conn.query("SELECT clientId, inboxId FROM inbox_tombstone ORDER BY deletedAt, clientId").map { row throws(StoreError) in
            InboxTombstone(clientId: try row.string(0), inboxId: try row.string(1))
        }
    }

    public static func find(inboxId: String, on conn: SQLiteConnection) throws(StoreError) -> InboxTombstone? {
        guard let row = try conn.queryOne("SELECT clientId, inboxId FROM inbox_tombstone WHERE inboxId = ?",
                                          [.text(inboxId)]) else { return nil }
        return InboxTombstone(clientId: try row.string(0), inboxId: try row.string(1))
    }

    public static func contains(clientId: String, on conn: SQLiteConnection) throws(StoreError) -> Bool {
        try conn.queryOne("SELECT 1 FROM inbox_tombstone WHERE clientId = ?", [.text(clientId)]) != nil
    }
}
